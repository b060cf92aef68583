/**
 * Issue 32, Slack's AI app split view: a new thread with Steward (`assistant_thread_started`) offers suggested prompts
 * built from the person's workflows and the Assistants, within Slack's limits (the fake checks them: at most four,
 * each a title and a message, the assistant:write scope); choosing the workflow's prompt runs it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, privateCommand, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createAssistantThreadStarted, createDirectMessage, eventEnvelope, newTs } from './slack-requests.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

describe('suggested prompts in a new AI app thread', () => {
  it("offers the person's workflow and the Assistants; the workflow's prompt runs it, answered in the thread", async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo], synthesizer: 'Said hi.' }),
    });
    const harness = h;
    const event = (e: Record<string, unknown>) =>
      harness.post(eventEnvelope(e, harness.slack.botUserId), 'application/json').then(() => harness.channel.settled());

    // Bob's thread: he has no workflows and there are no Assistants yet, so Steward offers what it can do.
    const bobThread = newTs();
    await event(createAssistantThreadStarted({ user: 'U0BOB', channel: 'D0BOB', threadTs: bobThread }));
    expect(harness.slack.suggestedPrompts.get(`D0BOB:${bobThread}`)?.prompts).toEqual([
      { title: 'What can you do?', message: 'What can you do with the tools you have?' },
    ]);

    expect((await privateCommand(harness, 'assistant create ops "Operations"', 'U0BOSS'))[0]).toMatch(/^Created/);
    const thread = await harness.mention('say hi');
    await harness.waitFor('the report', () => harness.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    await harness.steward.idle();
    expect((await privateCommand(harness, 'save digest', 'U0ADA'))[0]).toMatch(/^Saved workflow "digest"/);

    const dmThread = newTs();
    await event(createAssistantThreadStarted({ threadTs: dmThread }));
    const shown = harness.slack.suggestedPrompts.get(`D0ADA:${dmThread}`);
    expect(shown).toEqual({
      title: 'Try one of these',
      prompts: [
        { title: 'Run workflow digest', message: 'workflow digest run' },
        { title: 'Ask ops', message: 'ask ops: what can you do for me?' },
      ],
    });
    const call = harness.slack.callsOf('assistant.threads.setSuggestedPrompts').at(-1)!;
    expect(call.response.ok).toBe(true);

    // Choosing the prompt sends its message in the thread: the workflow runs now, and the thread says so.
    await event(createDirectMessage({ text: 'workflow digest run', threadTs: dmThread }));
    const answer = await harness.waitFor('the answer in the DM thread', () =>
      [...harness.slack.messages.values()].find((m) => m.channel === 'D0ADA' && m.threadTs === dmThread),
    );
    expect(messageText(answer)).toMatch(/Running "digest" version 1 now/);
    await harness.waitFor(
      "the fire's report in the workflow's thread",
      () => harness.replies(thread).filter((m) => messageText(m).includes('Said hi.')).length === 2,
    );
    expect(harness.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);
  });

  it('without the assistant:write scope, the thread simply has no prompts, and the refusal is logged', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    const harness = h;
    harness.slack.scopes = harness.slack.scopes.filter((s) => s !== 'assistant:write');
    await harness.post(eventEnvelope(createAssistantThreadStarted({}), harness.slack.botUserId), 'application/json');
    await harness.channel.settled();
    expect(harness.slack.callsOf('assistant.threads.setSuggestedPrompts')[0]?.response.error).toBe('missing_scope');
    expect(harness.logs.some((l) => /^warn slack: no suggested prompts for U0ADA: .*missing_scope/.test(l))).toBe(true);
  });
});

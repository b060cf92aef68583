import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const roles = (harness: SlackHarness) => harness.llm.requests.map((r) => r.role);
const slowThenSay = (message: string) =>
  planReply([
    { id: 'one', tool: 'everything.trigger-long-running-operation', args: { duration: 2, steps: 4 } },
    { id: 'two', tool: 'everything.echo', args: { message }, dependsOn: ['one'] },
  ]);

describe('slack thread replies, end to end on postgres', () => {
  it('a reply while the plan waits for review is classified as an amendment and re-plans the same card', async () => {
    const first = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }]);
    const second = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi and bye' } }], {
      summary: 'Say hi and bye',
    });
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [first, second], classifier: ['amend'] }),
    });
    const thread = await h.mention('say hi');
    const card = h.card(thread);

    await h.reply(thread, 'also say bye');
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    expect(h.card(thread).ts).toBe(card.ts);
    expect(messageText(h.card(thread))).toContain('Say hi and bye');
    expect(roles(h)).toEqual(['planner', 'classifier', 'planner']);
    expect(h.llm.requests[1]!.system.startsWith('[steward:classifier]')).toBe(true);
    expect(h.llm.requests[2]!.lastUserText).toContain('also say bye');
  });

  it('a status question while running is answered in the thread from the database, with no planner call', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [slowThenSay('done')], classifier: ['status'], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow job then say done');
    await h.waitFor('the running card', () => messageText(h!.card(thread)).includes('▶️ Running'));

    await h.reply(thread, 'how is it going?', 'U0BOB');
    const answer = await h.waitFor('the status answer', () =>
      h!.replies(thread).find((m) => /steps finished/.test(messageText(m))),
    );
    expect(messageText(answer)).toMatch(/0\/2 steps finished/);
    expect(roles(h)).toEqual(['planner', 'classifier']);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Done.')));
    await h.steward.idle();
  });

  it('an amendment by reply while running re-plans only the steps not yet run; the card keeps what ran', async () => {
    const revised = slowThenSay('bye');
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [slowThenSay('hi'), revised], classifier: ['amend'], synthesizer: ['Said bye.'] }),
    });
    const thread = await h.mention('slow job then say hi');
    await h.waitFor('the running card', () => messageText(h!.card(thread)).includes('⏳'));
    const runId = await onlyRunId(h);

    await h.reply(thread, 'make the last step say bye instead');
    await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
    expect(messageText(h.card(thread))).not.toMatch(/⚪ \*1\.\*/);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said bye.')));
    await h.steward.idle();
    const two = (await h.store.listStepAttempts(runId)).find((a) => a.stepId === 'two');
    expect(two).toMatchObject({ status: 'succeeded', args: { message: 'bye' } });
  });

  it('chatter classified as unrelated is left alone, and replies after the run ended are not for Steward', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [slowThenSay('x')], classifier: ['unrelated'], synthesizer: ['Done.'] }),
    });
    const thread = await h.mention('slow job then say x');
    await h.waitFor('the running card', () => messageText(h!.card(thread)).includes('▶️ Running'));
    const before = h.replies(thread).length;
    await h.reply(thread, 'nice weather today', 'U0BOB');
    expect(roles(h)).toEqual(['planner', 'classifier']);
    expect(h.replies(thread)).toHaveLength(before);

    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Done.')));
    await h.steward.idle();
    await h.waitFor('the final card', () => messageText(h!.card(thread)).includes('✅ Completed'));
    await h.reply(thread, 'thanks!');
    expect(roles(h)).toEqual(['planner', 'classifier', 'synthesizer']);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(1);
  });
});

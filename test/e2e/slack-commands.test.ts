/**
 * The `/steward` slash command through the real Bolt app: signed form posts, acked at once, answered privately. The
 * review and suggestion preferences are test/chat/preferences-spec.ts, on both platforms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, recordWorkflowRequests } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { slashCommandBody } from './slack-requests.ts';
import { cardsOf } from '../helpers/slack-delivery.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = (message: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary: `Say ${message}` });

/** Runs `/steward <text>`: the HTTP answer (the ack), how long it took, and what was posted to its response_url. */
async function command(harness: SlackHarness, text: string, o: { user?: string; channel?: string } = {}) {
  const before = harness.slack.calls.length;
  const started = Date.now();
  const body = slashCommandBody({
    text,
    ...o,
    responseUrl: harness.slack.responseUrl(),
    triggerId: harness.slack.newTriggerId(),
  });
  const res = await harness.post(body, 'application/x-www-form-urlencoded');
  const ackMs = Date.now() - started;
  const ack = await res.text();
  const acked = ack ? (JSON.parse(ack) as { response_type?: string; text?: string }) : {};
  await harness.channel.settled();
  const responses = harness.slack.calls.slice(before).filter((c) => c.method === 'response_url');
  return { status: res.status, ackMs, ack, acked, responses: responses.map((r) => r.args) };
}

describe('the /steward slash command, end to end on postgres', () => {
  it('help, and anything unknown, is answered privately in the acknowledgement itself', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    const help = await command(h, 'help');
    expect(help.status).toBe(200);
    expect(help.ackMs).toBeLessThan(3_000);
    expect(help.acked).toMatchObject({ response_type: 'ephemeral' });
    for (const sub of ['ask <request>', 'status', 'runs', 'review all|risky|none', 'suggestions on|off'])
      expect(help.ack).toContain(`/steward ${sub}`);
    const unknown = await command(h, 'frobnicate now');
    expect(unknown.acked.text).toMatch(/^I do not know `frobnicate`\./);
    expect(unknown.acked.text).toContain('/steward status');
    const badReview = await command(h, 'review sometimes');
    expect(badReview.acked.text).toContain('takes one of `all`, `risky` or `none`');
    const badSuggestions = await command(h, 'suggestions maybe');
    expect(badSuggestions.acked.text).toMatch(/^`\/steward suggestions` takes `on` or `off`\./);
    expect(h.slack.calls.filter((c) => c.method === 'response_url')).toEqual([]);
  });

  it('dashboard answers privately with a sign-in link for this person, or says the dashboard is off', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    const off = await command(h, 'dashboard');
    expect(off.responses).toEqual([expect.objectContaining({ response_type: 'ephemeral' })]);
    expect(String(off.responses[0]!.text)).toContain('not turned on');
    await h.close();
    h = undefined;

    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({}),
      dashboardUrl: 'https://steward.example.com',
    });
    const on = await command(h, 'dashboard', { user: 'U0BOB' });
    expect(on.ack).toBe('');
    expect(on.responses).toEqual([expect.objectContaining({ response_type: 'ephemeral' })]);
    const token = /<https:\/\/steward\.example\.com\/signin\/([\w-]+)\|Open the dashboard>/.exec(
      String(on.responses[0]!.text),
    )?.[1];
    expect(token).toBeTruthy();
    const links = new PgDashboard(h.db.db, { baseUrl: 'https://steward.example.com' });
    expect(await links.consumeLink(token!, new Date())).toMatchObject({ channel: 'slack', id: 'U0BOB' });
  });

  it('ask posts who asked what in the channel and answers in its thread; status and runs list it with a link', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [echo('hi')], synthesizer: ['Said hi.'] }),
    });
    const none = await command(h, 'status');
    expect(none.responses[0]!.text).toContain('You have no runs under way');

    // A slash command works anywhere, but Steward posts only where it is a member (the fake's membership rule).
    h.slack.join('C0OPS');
    const asked = await command(h, 'ask say hi &lt;!channel&gt; &amp; more', { channel: 'C0OPS' });
    expect(asked.ackMs).toBeLessThan(3_000);
    const top = [...h.slack.messages.values()].find((m) => m.channel === 'C0OPS' && !m.threadTs)!;
    expect(top.text).toBe('<@U0ADA> asked: say hi &lt;!channel&gt; &amp; more');
    const card = h.card(top.ts);
    expect(card.channel).toBe('C0OPS');
    expect(h.llm.requests[0]!.lastUserText).toContain('say hi <!channel> & more');
    const runId = await onlyRunId(h);

    const status = await command(h, 'status');
    const link = `https://test.slack.com/archives/C0OPS/p${top.ts.replace('.', '')}`;
    expect(status.responses[0]!.text).toContain('*Your runs under way*');
    expect(status.responses[0]!.text).toContain(`📋 *waiting for review* · <${link}|Say hi>`);
    const bobs = await command(h, 'status', { user: 'U0BOB' });
    expect(bobs.responses.map((r) => r.text)).toEqual([
      'You have no runs under way. Start one with `/steward ask <request>`.',
    ]);

    await h.press(card, 'approve');
    await h.waitFor('the report', () => h!.replies(top.ts).find((m) => messageText(m).includes('Said hi.')));
    await h.steward.idle();
    expect((await command(h, 'status')).responses[0]!.text).toContain('You have no runs under way');
    const runs = await command(h, 'runs');
    expect(runs.responses[0]!.text).toContain('*Your last 10 runs*');
    expect(runs.responses[0]!.text).toContain(`✅ *finished* · <${link}|Say hi>`);
    expect((await h.store.getRun(runId))!.status).toBe('completed');
  });

  it('save, schedule, workflows, workflow and fork: a finished run becomes a workflow, answered only to the asker', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo('hi')], synthesizer: 'Said hi.' }),
    });
    const help = await command(h, 'help');
    for (const form of ['save <name>', 'workflows', 'workflow <name>', 'fork <name> <new name>', 'schedule <name>'])
      expect(help.ack).toContain(`/steward ${form}`);
    const thread = await h.mention('say hi');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => messageText(m).includes('Said hi.')));
    await h.steward.idle();

    const asked = recordWorkflowRequests(h.steward);
    const posted = () => h!.slack.calls.filter((c) => c.method === 'chat.postMessage').length;
    const before = posted();
    const said = async (text: string) => {
      const r = await command(h!, text, { channel: 'C0OPS' });
      expect(r.status).toBe(200);
      expect(r.ackMs).toBeLessThan(3_000);
      expect(r.ack).toBe('');
      expect(r.responses).toEqual([expect.objectContaining({ response_type: 'ephemeral' })]);
      return String(r.responses[0]!.text);
    };
    expect(await said('save digest')).toMatch(/^Saved workflow "digest" \(version 1\) from run /);
    expect(await said('SCHEDULE digest “0 9 * * MON” Europe/Berlin')).toMatch(
      /^Scheduled digest: `0 9 \* \* MON` in Europe\/Berlin .*Next: Mon \d{4}-\d{2}-\d{2} 09:00, Mon/,
    );
    expect(await said('workflows')).toContain('digest, version 1');
    expect(await said('fork digest digest-2')).toMatch(/^Forked "digest" \(version 1\) as "digest-2"/);
    // The words as typed, from the person, about the channel the command was used in (Slack does not say the thread).
    expect(asked.map((r) => [r.actor.id, r.conversation.key, r.text])).toEqual([
      ['U0ADA', 'C0OPS', 'save digest'],
      ['U0ADA', 'C0OPS', 'SCHEDULE digest “0 9 * * MON” Europe/Berlin'],
      ['U0ADA', 'C0OPS', 'workflows'],
      ['U0ADA', 'C0OPS', 'fork digest digest-2'],
    ]);
    // Someone else neither sees nor runs it: a plan may carry what its channel said.
    const bob = async (text: string) => String((await command(h!, text, { user: 'U0BOB' })).responses[0]?.text);
    expect(await bob('workflows')).toMatch(/^No workflows yet\./);
    for (const text of ['workflow digest', 'workflow digest run', 'fork digest mine'])
      expect(await bob(text)).toBe('Only the owner of "digest" or an approver can see, change, run or fork it.');
    // Nothing was posted where others see it, and no planner call came of it.
    expect(posted()).toBe(before);
    expect(h.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);

    // Run now: the fire's card and report go to the saved run's thread, with no planner call.
    expect(await said('workflow digest run')).toMatch(/^Running "digest" version 1 now/);
    await h.waitFor(
      "the fire's report",
      () => h!.replies(thread).filter((m) => messageText(m).includes('Said hi.')).length === 2,
    );
    expect(h.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(1);
    const cards = cardsOf(h.slack, thread);
    expect(cards).toHaveLength(2);
    expect(messageText(cards[1]!)).toContain('Workflow digest v1: run now of');
  });

  it('ask in a DM answers in the DM; where Steward cannot post, it says so and starts nothing', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [echo('hi')] }),
    });
    await command(h, 'ask say hi', { channel: 'D0ADA' });
    const top = [...h.slack.messages.values()].find((m) => m.channel === 'D0ADA' && !m.threadTs)!;
    expect(h.card(top.ts).channel).toBe('D0ADA');

    // Steward was never invited to #secret: Slack refuses the post with not_in_channel (the fake's membership rule).
    const refused = await command(h, 'ask say hi', { channel: 'C0SECRET' });
    expect(refused.responses[0]!.text).toContain('I cannot post in this conversation (not_in_channel)');
    expect(refused.responses[0]!.text).toContain('/invite @Steward');
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(1);
  });
});

describe('/steward prompts and prompt, end to end on postgres (issue 29)', () => {
  it("lists server-everything's prompts privately, and starts a request from one in the channel, marked as the server's words", async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({ planner: [echo('sunny')] }),
    });
    const listed = await command(h, 'prompts');
    const text = String(listed.responses[0]!.text);
    expect(text).toContain("names and descriptions are the servers' words");
    expect(text).toContain('• everything/args-prompt city=… [state=…]: A prompt with two arguments');
    const missing = await command(h, 'prompt everything/args-prompt');
    expect(missing.responses.map((r) => r.text)).toEqual(['The prompt everything/args-prompt needs city=….']);

    // Steward is in #ops (a slash command comes from any channel; posting there needs membership).
    h.slack.join('C0OPS');
    await command(h, 'prompt everything/args-prompt city=Paris state="Île de France"', { channel: 'C0OPS' });
    const top = [...h.slack.messages.values()].find((m) => m.channel === 'C0OPS' && !m.threadTs)!;
    expect(top.text).toBe(
      "<@U0ADA> Started from the prompt everything/args-prompt: the text below is that MCP server's words, not yours or Steward's; the plan made from it is reviewed as any other.\n>>> What's weather in Paris, Île de France?",
    );
    // A plan card in its thread: the prompt's text went to the planner as the person's request.
    h.card(top.ts);
    expect(h.llm.requests[0]!.lastUserText).toContain("What's weather in Paris, Île de France?");
    expect((await h.store.getRun(await onlyRunId(h)))!.requester).toMatchObject({ id: 'U0ADA' });
  });
});

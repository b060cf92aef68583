/**
 * Which run a word applies to in a Slack DM (issue 25, docs/runs.md "Steering a run"): the thread decides, so a second
 * request by DM (a quick answer) never takes the first run's place; a bare `stop` outside any thread names no run,
 * so while runs are active it is answered with a picker (a Stop button per run), not planned as a request.
 * Tool calls and cancellations are seen at the audit server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StewardSettings } from '../../src/engine/flows/steward.ts';
import { allTexts } from '../bot/slack/fixtures.ts';
import { byRole, type FakeReply, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { createAuditServer, planReply, type AuditServer } from './harness.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { createDirectMessage, eventEnvelope, newTs } from './slack-requests.ts';

let h: SlackHarness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const quickOn: Partial<StewardSettings> = { quickAnswers: { maxTurns: 4, maxTokens: 12_000 } };
const toPlanner: FakeReply = {
  text: '',
  toolCalls: [{ id: 'call_1', name: 'plan_request', args: { reason: 'long' } }],
};
const sleepPlan = (id: string) => planReply([{ id, tool: 'audit.sleep', args: { ms: 20_000 } }]);
const entries = (type: string) => (audit?.entries() ?? []).filter((e) => e.type === type && e.name === 'sleep');

async function start(script: FakeLlmScript): Promise<SlackHarness> {
  audit = createAuditServer();
  return startSlackHarness({ db: 'postgres', servers: [audit.config()], script, settings: quickOn });
}

/** Sends a DM (top level unless `threadTs`) and waits until the channel has handled it. */
async function dm(harness: SlackHarness, text: string, threadTs?: string): Promise<string> {
  const ts = newTs();
  const event = createDirectMessage({ text, ts, ...(threadTs && { threadTs }) });
  expect((await harness.post(eventEnvelope(event, harness.slack.botUserId), 'application/json')).status).toBe(200);
  await harness.channel.settled();
  return ts;
}

/** The run started by the DM at `ts`. */
async function runOf(harness: SlackHarness, ts: string): Promise<{ id: string; status: string }> {
  return harness.db.db
    .selectFrom('runs')
    .select(['id', 'status'])
    .where('conversation_key', '=', `D0ADA:${ts}`)
    .executeTakeFirstOrThrow();
}

describe('which run a word applies to in a Slack DM', () => {
  it('a quick answer asked by a second DM while a long run works leaves the long run in its own thread: its Stop still stops it', async () => {
    h = await start(
      byRole({ butler: [toPlanner, 'It is noon.'], planner: [sleepPlan('long')], synthesizer: 'Stopped.' }),
    );
    const first = await dm(h, 'Wait twenty seconds');
    await h.waitFor('the sleep at the server', () => entries('call').length === 1);
    const second = await dm(h, 'What time is it?');
    await h.waitFor('the quick answer', () => h!.replies(second).some((m) => m.text.includes('It is noon.')));

    expect(h.replies(first).some((m) => messageText(m).includes('noon'))).toBe(false);
    expect((await runOf(h, second)).status).toBe('completed');
    expect((await runOf(h, first)).status).toBe('running');
    await h.press(h.card(first), 'stop');
    await h.waitFor('the cancellation at the server', () => entries('cancelled').length === 1);
    await h.waitFor('the long run to stop', async () => (await runOf(h!, first)).status === 'stopped');
  });

  it('a bare "stop" outside any thread with two runs active answers with a picker; its buttons stop only the run pressed', async () => {
    h = await start(
      byRole({ butler: [toPlanner, toPlanner], planner: [sleepPlan('a'), sleepPlan('b')], synthesizer: 'Stopped.' }),
    );
    const first = await dm(h, 'Wait twenty seconds');
    const second = await dm(h, 'Wait twenty seconds more');
    await h.waitFor('both sleeps at the server', () => entries('call').length === 2);
    const [a, b] = [await runOf(h, first), await runOf(h, second)];
    const modelCalls = h.llm.requests.length;

    const stopTs = await dm(h, 'stop');
    const picker = h.slack.callsOf('chat.postEphemeral').at(-1)!;
    expect(picker.args).toMatchObject({ channel: 'D0ADA', user: 'U0ADA' });
    const lines = allTexts(picker.args.blocks);
    expect(picker.args.text).toBe('Which run should I stop? You have 2 active runs here:');
    expect(lines.join('\n')).toContain(`${b.id.slice(0, 8)} · running · Wait twenty seconds more`);
    expect(lines.join('\n')).toContain(`${a.id.slice(0, 8)} · running · Wait twenty seconds`);
    // The word was not taken for a request: no run, no model call.
    expect(
      await h.db.db.selectFrom('runs').select('id').where('conversation_key', '=', `D0ADA:${stopTs}`).execute(),
    ).toEqual([]);
    expect(h.llm.requests).toHaveLength(modelCalls);

    const buttons = (picker.args.blocks as Array<{ accessory?: { action_id: string; value: string } }>).flatMap(
      (block) => (block.accessory ? [block.accessory] : []),
    );
    expect(buttons.map((button) => button.action_id)).toEqual(['steward.stop:0', 'steward.stop:1']);
    const onFirst = buttons.find((button) => button.value.includes(a.id))!;
    const where: FakeMessage = { ...h.card(first), channel: 'D0ADA', ts: newTs(), threadTs: undefined };
    await h.press(where, onFirst.action_id.slice('steward.'.length), { value: onFirst.value });
    await h.waitFor('the cancellation at the server', () => entries('cancelled').length === 1);
    await h.waitFor('the first run to stop', async () => (await runOf(h!, first)).status === 'stopped');
    expect((await runOf(h, second)).status).toBe('running');
  });
});

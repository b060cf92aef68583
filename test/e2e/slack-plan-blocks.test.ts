import type { types } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { reviewed } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function tasksOf(blocks: unknown): types.TaskCardBlock[] {
  const plan = (blocks as types.KnownBlock[]).find((b): b is types.PlanBlock => b.type === 'plan');
  return (plan?.tasks ?? []) as types.TaskCardBlock[];
}

const statuses = (m: FakeMessage) => tasksOf(m.blocks).map((t) => [t.task_id, t.status]);

describe('slack plan blocks, end to end on postgres', () => {
  it('the card shows its steps as task cards that turn in progress, then complete', async () => {
    const plan = planReply(
      [
        {
          id: 'slow',
          tool: 'everything.trigger-long-running-operation',
          args: { duration: 2, steps: 4 },
          description: 'a slow job',
        },
        { id: 'say', tool: 'everything.echo', args: { message: 'done <!channel>' }, dependsOn: ['slow'] },
      ],
      { summary: 'Run the slow job, then say done' },
    );
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [plan], synthesizer: ['Done.'] }),
      planBlocks: { channel: true },
    });
    const thread = await h.mention('run the slow job and tell me');
    const card = await h.waitFor('the plan card', () => h!.card(thread));
    expect(statuses(card)).toEqual([
      ['slow', 'pending'],
      ['say', 'pending'],
    ]);
    const say = tasksOf(card.blocks)[1]!;
    // The arguments are plain rich text: shown as written, and Slack does not turn them into a mention.
    expect(JSON.stringify(say.details)).toContain('everything.echo {\\"message\\":\\"done <!channel>\\"}');
    expect(messageText(card)).toContain('📋 Plan waiting for review');

    expect(await h.press(card, 'approve')).toBe(200);
    await h.waitFor('the final card', () => messageText(h!.card(thread)).includes('✅ Completed'));
    expect(statuses(h.card(thread))).toEqual([
      ['slow', 'complete'],
      ['say', 'complete'],
    ]);
    const updates = h.slack.calls.filter((c) => c.method === 'chat.update' && c.args.ts === card.ts);
    expect(updates.some((u) => tasksOf(u.args.blocks).some((t) => t.status === 'in_progress'))).toBe(true);
    // Slack (the fake, with the documented plan and task card limits) accepted every card.
    expect(h.slack.calls.every((c) => c.response.ok === true)).toBe(true);
  });

  it('a workspace that refuses plan blocks still gets the card at once, as step lines, to its final state', async () => {
    const plan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }]);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [plan], synthesizer: ['Said it.'] }),
      planBlocks: { channel: true, workspace: false },
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the plan card', () => h!.card(thread));
    expect(tasksOf(card.blocks)).toEqual([]);
    expect(messageText(card)).toContain('`everything.echo`');
    const refused = h.slack.calls.filter((c) => c.response.ok !== true);
    expect(refused.map((c) => [c.method, c.response.error])).toEqual([['chat.postMessage', 'invalid_blocks']]);

    expect(await h.press(card, 'approve')).toBe(200);
    await h.waitFor('the final card', () => messageText(h!.card(thread)).includes('✅ Completed'));
    // Refused once, logged once; every later card went as step lines straight away.
    expect(h.slack.calls.filter((c) => c.response.ok !== true)).toHaveLength(1);
    expect(h.logs.filter((l) => l.startsWith('info') && l.includes('refused a plan block'))).toHaveLength(1);
    await h.waitFor('the report', () => h!.replies(thread).some((m) => messageText(m).includes('Said it.')));
  });

  it('an update refused for its plan block goes again at once as step lines, so the card still ends done', async () => {
    const plan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }]);
    h = await startSlackHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [plan], synthesizer: ['Said it.'] }),
      planBlocks: { channel: true },
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the plan card', () => h!.card(thread));
    expect(statuses(card)).toEqual([['say', 'pending']]);
    // From now on the workspace refuses plan blocks in updates.
    h.slack.refuse = (method, args) =>
      method === 'chat.update' && tasksOf(args.blocks).length > 0 ? 'invalid_blocks' : undefined;

    expect(await h.press(card, 'approve')).toBe(200);
    await h.waitFor('the final card', () => messageText(h!.card(thread)).includes('✅ Completed'));
    expect(tasksOf(h.card(thread).blocks)).toEqual([]);
    expect(messageText(h.card(thread))).toContain('`everything.echo`');
    expect(h.slack.calls.filter((c) => c.response.ok !== true)).toHaveLength(1);
  });
});

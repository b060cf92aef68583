/**
 * Delegation on Discord (issue 16): a mention whose plan has a `delegate` step (the built-in `steward.delegate`) hands
 * a task to the Assistant "ops" as a child run. The child's card is posted in the thread Steward started for the
 * parent, names the Assistant and says whose step it is; the child's report comes before the parent's, and the
 * parent's next step gets it. Stop pressed on the parent's card reaches the child: its call in flight is cancelled
 * at the tool server. Tool calls are counted at the audit server, not in the database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredRun } from '../../src/engine/ports.ts';
import type { StoredMessage } from '../fakes/fake-discord-server.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { createAuditServer, planReply, type AuditServer } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const calls = () => (audit?.entries() ?? []).filter((e) => e.type === 'call');

const delegate = (id: string, task: string) => ({ id, tool: 'steward.delegate', args: { assistant: 'ops', task } });

/** `/steward assistant command: …` as Boss (an approver); resolves with its private answer. */
async function assistantCommand(harness: DiscordHarness, command: string): Promise<string> {
  const id = await harness.slash('assistant', { command }, { user: harness.boss });
  return harness.waitFor('the private answer', () => harness.privateTexts(id).find(Boolean));
}

/** Boss makes `ops`, granted the audit server's lookup and sleep (both read-only). */
async function setUpOps(harness: DiscordHarness): Promise<void> {
  expect(await assistantCommand(harness, 'create ops "Operations: contacts and waiting"')).toMatch(
    /^Created the Assistant "ops"/,
  );
  expect(await assistantCommand(harness, 'ops grant audit.lookup allow')).toBe('"ops": allow the tool audit.lookup.');
  expect(await assistantCommand(harness, 'ops grant audit.sleep allow')).toBe('"ops": allow the tool audit.sleep.');
}

/** Every card Steward posted in a thread (its messages with an embed and buttons or a heading), in order. */
function cards(harness: DiscordHarness, threadId: string): StoredMessage[] {
  return harness.discord
    .messagesIn(threadId)
    .filter((m) => m.message.author.id === harness.discord.botUser.id && !m.ephemeral)
    .filter((m) => (m.message.embeds ?? []).some((e) => e.author?.name?.includes('· revision')));
}

/** Every run, oldest first. */
async function runs(harness: DiscordHarness): Promise<StoredRun[]> {
  const rows = await harness.db.db.selectFrom('runs').select('id').orderBy('created_at').orderBy('id').execute();
  return Promise.all(rows.map(async (r) => (await harness.store.getRun(r.id))!));
}

/** The parent run and its child, once both exist. */
function parentAndChild(harness: DiscordHarness): Promise<[StoredRun, StoredRun]> {
  return harness.waitFor('the parent and its child run', async () => {
    const all = await runs(harness);
    const parent = all.find((r) => r.parentRunId === undefined);
    const child = all.find((r) => r.parentRunId !== undefined);
    return parent && child ? ([parent, child] as [StoredRun, StoredRun]) : undefined;
  });
}

function untilStatus(harness: DiscordHarness, runId: string, status: string): Promise<StoredRun> {
  return harness.waitFor(`run ${runId} to be ${status}`, async () => {
    const run = await harness.store.getRun(runId);
    return run?.status === status ? run : undefined;
  });
}

describe('delegation on Discord, end to end on postgres', () => {
  it("the child's card is in the parent's thread and names ops; its report comes first and feeds the parent's step", async () => {
    audit = createAuditServer();
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: byRole({
        planner: [
          planReply(
            [
              delegate('ask', 'Find Ada in the contacts.'),
              {
                id: 'use',
                tool: 'audit.lookup',
                args: { answer: { $ref: 'steps.ask.output.content[0].text' } },
                dependsOn: ['ask'],
              },
            ],
            { summary: 'Ask ops where Ada is' },
          ),
          planReply([{ id: 'find', tool: 'audit.lookup', args: { answer: 'Ada Lovelace, room 12' } }], {
            summary: 'Look Ada up',
          }),
        ],
        synthesizer: ['Ada Lovelace is in room 12.', 'ops found Ada: room 12.'],
      }),
    });
    await setUpOps(h);

    const thread = await h.mention('where is Ada? Ops may know');
    const parentReport = await h.waitFor('the parent report', () =>
      h!.replies(thread).find((m) => shownText(m.message).includes('ops found Ada: room 12.')),
    );
    const [parent, child] = await parentAndChild(h);
    expect(parent.status).toBe('completed');
    expect(child).toMatchObject({ status: 'completed', assistant: 'ops', parentRunId: parent.id });
    expect(child.conversation).toEqual(parent.conversation);

    // Two cards in the one thread: the parent's first, then the child's, which names ops and the parent run.
    const [parentCard, childCard, ...more] = await h.waitFor('both final cards', () => {
      const all = cards(h!, thread);
      return all.length >= 2 && all.every((c) => shownText(c.message).includes('✅ Completed')) ? all : undefined;
    });
    expect(more).toEqual([]);
    expect(shownText(parentCard!.message)).toContain('Ask ops where Ada is');
    expect(shownText(parentCard!.message)).not.toContain('**Assistant**');
    expect(shownText(childCard!.message)).toContain('Look Ada up');
    expect(shownText(childCard!.message)).toContain(`**Assistant** ops (a step of run \`${parent.id.slice(0, 8)}\`)`);

    // The thread ends with the child's report, then the parent's.
    const replies = h.replies(thread);
    const childReport = replies.findIndex((m) => shownText(m.message).includes('Report of the Assistant "ops"'));
    expect(childReport).toBeGreaterThanOrEqual(0);
    expect(shownText(replies[childReport]!.message)).toContain('Ada Lovelace is in room 12.');
    expect(replies.at(-1)).toBe(parentReport);
    expect(childReport).toBe(replies.length - 2);
    expect(shownText(parentReport.message)).not.toContain('Report of the Assistant');

    // At the server: the child's lookup, then the parent's last step given the child's report.
    expect(calls().map((c) => c.args?.['answer'])).toEqual([
      'Ada Lovelace, room 12',
      'Report of the Assistant "ops":\nAda Lovelace is in room 12.',
    ]);
  });

  it("Stop on the parent's card stops the child: its call in flight is cancelled at the server, both end stopped", async () => {
    audit = createAuditServer();
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: byRole({
        planner: [
          planReply(
            [
              delegate('wait', 'Sleep for a minute.'),
              { id: 'after', tool: 'audit.lookup', args: { answer: 'never' }, dependsOn: ['wait'] },
            ],
            { summary: 'Have ops wait' },
          ),
          planReply([{ id: 'nap', tool: 'audit.sleep', args: { ms: 60_000 } }], { summary: 'Sleep a minute' }),
        ],
        // Both runs write their report as they stop, in either order: each is answered by its own request.
        synthesizer: (req) =>
          req.lastUserText.includes('Sleep for a minute.')
            ? 'Stopped before the minute was up.'
            : 'Stopped: ops did not finish.',
      }),
    });
    await setUpOps(h);

    const thread = await h.mention('have ops wait for me');
    await h.waitFor('the child to call sleep', () => calls().some((c) => c.name === 'sleep'));
    const [parent, child] = await parentAndChild(h);
    const step = `**Assistant** ops (a step of run \`${parent.id.slice(0, 8)}\`)`;
    const childCard = () => cards(h!, thread).find((c) => shownText(c.message).includes(step));
    await h.waitFor('the child card, running', () => shownText(childCard()!.message).includes('▶️ Running'));
    expect(shownText(childCard()!.message)).toContain('Sleep a minute');

    // The parent's card is the thread's first card; the person presses its Stop, not the child's.
    const parentCard = cards(h, thread)[0]!;
    expect(shownText(parentCard.message)).toContain('Have ops wait');
    expect(shownText(parentCard.message)).not.toContain('**Assistant**');
    await h.press(parentCard, 'stop');

    await untilStatus(h, child.id, 'stopped');
    await untilStatus(h, parent.id, 'stopped');
    await h.waitFor('the sleep to be cancelled at the server', () =>
      audit!.entries().some((e) => e.type === 'cancelled' && e.name === 'sleep'),
    );
    // Both cards end showing the stop: the child's too, though only the parent's button was pressed.
    await h.waitFor('the child card, stopped', () => shownText(childCard()!.message).includes('⏹️ Stopped'));
    await h.waitFor('the parent card, stopped', () => shownText(cards(h!, thread)[0]!.message).includes('⏹️ Stopped'));
    // Each run reports in the thread; the child's report says whose it is.
    await h.waitFor('both reports', () => {
      const texts = h!.replies(thread).map((m) => shownText(m.message));
      return (
        texts.some((t) => t.includes('Report of the Assistant "ops":\nStopped before the minute was up.')) &&
        texts.some((t) => t.includes('Report (stopped)') && t.includes('Stopped: ops did not finish.'))
      );
    });
    // Nothing more reached the server: the parent's next step never ran.
    expect(calls().map((c) => c.name)).toEqual(['sleep']);
    const wait = (await h.store.listStepAttempts(parent.id)).find((a) => a.stepId === 'wait');
    expect(wait).toMatchObject({ status: 'cancelled' });
    expect(await h.store.listDecisions(child.id)).toContainEqual(
      expect.objectContaining({ action: 'stop', accepted: true }),
    );
  });
});

/**
 * Delegation on Slack (issue 16): a mention whose plan has a `delegate` step (the built-in `steward.delegate`) hands a
 * task to the Assistant "ops" as a child run. The child's card is posted in the same thread as the parent's, names
 * the Assistant and says whose step it is; the child's report comes before the parent's, and the parent's next step
 * gets it. Stop pressed on the parent's card reaches the child: its call in flight is cancelled at the tool server.
 * Tool calls are counted at the audit server, not in the database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../fakes/fake-slack-server.ts';
import { HAND_OFF_CALLS, handOffScript, parentAndChild, untilStatus, waitOnOpsScript } from './delegation-fixtures.ts';
import { createAuditServer, type AuditServer } from './harness.ts';
import { messageText, privateCommand, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const calls = () => (audit?.entries() ?? []).filter((e) => e.type === 'call');

/** Runs `/steward <text>` as Boss (an approver): the texts it answered privately. */
const command = (harness: SlackHarness, text: string) => privateCommand(harness, text, 'U0BOSS');

/** Boss makes `ops`, granted the audit server's lookup and sleep (both read-only). */
async function setUpOps(harness: SlackHarness): Promise<void> {
  expect((await command(harness, 'assistant create ops "Operations: contacts and waiting"'))[0]).toMatch(
    /^Created the Assistant/,
  );
  expect(await command(harness, 'assistant ops grant audit.lookup allow')).toEqual([
    '"ops": allow the tool audit.lookup.',
  ]);
  expect(await command(harness, 'assistant ops grant audit.sleep allow')).toEqual([
    '"ops": allow the tool audit.sleep.',
  ]);
}

/** Every card in a thread (bot messages that start with a header), in the order they were posted. */
function cards(harness: SlackHarness, threadTs: string): FakeMessage[] {
  return [...harness.slack.messages.values()].filter((m) => m.threadTs === threadTs && m.blocks[0]?.type === 'header');
}

describe('delegation on Slack, end to end on postgres', () => {
  it("the child's card is in the parent's thread and names ops; its report comes first and feeds the parent's step", async () => {
    audit = createAuditServer();
    h = await startSlackHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: handOffScript(),
    });
    await setUpOps(h);

    const thread = await h.mention('where is Ada? Ops may know');
    const parentReport = await h.waitFor('the parent report', () =>
      h!.replies(thread).find((m) => messageText(m).includes('ops found Ada: room 12.')),
    );
    const [parent, child] = await parentAndChild(h);
    expect(parent.status).toBe('completed');
    expect(child).toMatchObject({ status: 'completed', assistant: 'ops', parentRunId: parent.id });

    // Two cards in the one thread: the parent's first, then the child's, which names ops and the parent run.
    const [parentCard, childCard, ...more] = await h.waitFor('both final cards', () => {
      const all = cards(h!, thread);
      return all.length >= 2 && all.every((c) => messageText(c).includes('✅ Completed')) ? all : undefined;
    });
    expect(more).toEqual([]);
    expect(messageText(parentCard!)).toContain('Ask ops where Ada is');
    expect(messageText(parentCard!)).not.toContain('Assistant *ops*');
    expect(messageText(childCard!)).toContain(
      `Assistant *ops* (a step of run \`${parent.id.slice(0, 8)}\`) · Look Ada up`,
    );
    expect(childCard!.channel).toBe(parentCard!.channel);

    // The thread ends with the child's report, then the parent's.
    const replies = h.replies(thread);
    const childReport = replies.findIndex((m) => messageText(m).includes('Report of the Assistant "ops"'));
    expect(childReport).toBeGreaterThanOrEqual(0);
    expect(messageText(replies[childReport]!)).toContain('Ada Lovelace is in room 12.');
    expect(replies.indexOf(parentReport)).toBe(replies.length - 1);
    expect(childReport).toBe(replies.length - 2);
    expect(messageText(parentReport)).not.toContain('Report of the Assistant');

    // At the server: the child's lookup, then the parent's last step given the child's report.
    expect(calls().map((c) => c.args?.['answer'])).toEqual(HAND_OFF_CALLS);
  });

  it("Stop on the parent's card stops the child: its call in flight is cancelled at the server, both end stopped", async () => {
    audit = createAuditServer();
    h = await startSlackHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: waitOnOpsScript(),
    });
    await setUpOps(h);

    const thread = await h.mention('have ops wait for me');
    await h.waitFor('the child to call sleep', () => calls().some((c) => c.name === 'sleep'));
    const [parent, child] = await parentAndChild(h);
    const step = `Assistant *ops* (a step of run \`${parent.id.slice(0, 8)}\`) · Sleep a minute`;
    await h.waitFor('the child card, running', () =>
      cards(h!, thread).find((c) => messageText(c).includes(step) && messageText(c).includes('▶️ Running')),
    );

    // The parent's card is the thread's first card; the person presses its Stop, not the child's.
    const parentCard = cards(h, thread)[0]!;
    expect(messageText(parentCard)).toContain('Have ops wait');
    expect(messageText(parentCard)).not.toContain('Assistant *ops*');
    expect(await h.press(parentCard, 'stop')).toBe(200);

    await untilStatus(h, child.id, 'stopped');
    await untilStatus(h, parent.id, 'stopped');
    await h.waitFor('the sleep to be cancelled at the server', () =>
      audit!.entries().some((e) => e.type === 'cancelled' && e.name === 'sleep'),
    );
    // Both cards end showing the stop: the child's too, though only the parent's button was pressed.
    await h.waitFor('the child card, stopped', () =>
      cards(h!, thread).find((c) => messageText(c).includes(step) && messageText(c).includes('⏹️ Stopped')),
    );
    await h.waitFor('the parent card, stopped', () => messageText(cards(h!, thread)[0]!).includes('⏹️ Stopped'));
    // Each run reports in the thread; the child's report says whose it is.
    await h.waitFor('both reports', () => {
      const texts = h!.replies(thread).map(messageText);
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

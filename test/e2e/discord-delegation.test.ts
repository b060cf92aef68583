/**
 * Delegation on Discord (issue 16): a mention whose plan has a `delegate` step (the built-in `steward.delegate`) hands
 * a task to the Assistant "ops" as a child run. The child's card is posted in the thread Steward started for the
 * parent, names the Assistant and says whose step it is; the child's report comes before the parent's, and the
 * parent's next step gets it. Stop pressed on the parent's card reaches the child: its call in flight is cancelled
 * at the tool server. Tool calls are counted at the audit server, not in the database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/fake-discord-server.ts';
import { HAND_OFF_CALLS, handOffScript, parentAndChild, untilStatus, waitOnOpsScript } from './delegation-fixtures.ts';
import { createAuditServer, type AuditServer } from './harness.ts';
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

describe('delegation on Discord, end to end on postgres', () => {
  it("the child's card is in the parent's thread and names ops; its report comes first and feeds the parent's step", async () => {
    audit = createAuditServer();
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: handOffScript(),
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
    expect(calls().map((c) => c.args?.['answer'])).toEqual(HAND_OFF_CALLS);
  });

  it("Stop on the parent's card stops the child: its call in flight is cancelled at the server, both end stopped", async () => {
    audit = createAuditServer();
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: waitOnOpsScript(),
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

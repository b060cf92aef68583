/**
 * Delegation in a chat (issue 16), the same on Slack and Discord: a mention whose plan has a `delegate` step hands a
 * task to the Assistant "ops" as a child run. The child's card is posted in the parent's thread, names the Assistant
 * and says whose step it is; the child's report comes before the parent's, and the parent's next step gets it. Stop
 * pressed on the parent's card reaches the child: its call in flight is cancelled at the tool server. Tool calls are
 * counted at the audit server, not in the database.
 */
import { describe, expect, it } from 'vitest';
import {
  HAND_OFF_CALLS,
  handOffScript,
  parentAndChild,
  untilStatus,
  waitOnOpsScript,
} from '../e2e/delegation-fixtures.ts';
import { createAuditServer, type AuditServer } from '../e2e/harness.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import type { Chat } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** Boss makes `ops`, granted the audit server's lookup and sleep (both read-only). */
async function setUpOps(c: Chat): Promise<void> {
  expect((await c.command('assistant create ops "Operations: contacts and waiting"', 'boss'))[0]).toMatch(
    /^Created the Assistant "ops"/,
  );
  expect(await c.command('assistant ops grant audit.lookup allow', 'boss')).toEqual([
    '"ops": allow the tool audit.lookup.',
  ]);
  expect(await c.command('assistant ops grant audit.sleep allow', 'boss')).toEqual([
    '"ops": allow the tool audit.sleep.',
  ]);
}

/** The delegation scenarios on the platform `start` opens. */
export function delegationSpec<C extends Chat>(name: string, start: Start<C>): void {
  const chat = useChat(start);
  let audit: AuditServer;
  const calls = () => audit.entries().filter((e) => e.type === 'call');
  const stage = async (script: FakeLlmScript) => {
    audit = createAuditServer();
    chat.cleanup(() => audit.remove());
    const c = await chat.start({ db: 'postgres', servers: [audit.config()], script });
    await setUpOps(c);
    return c;
  };

  describe(`delegation on ${name}, end to end on postgres`, () => {
    it("the child's card is in the parent's thread and names ops; its report comes first and feeds the parent's step", async () => {
      const c = await stage(handOffScript());
      const thread = await c.mention('where is Ada? Ops may know');
      const parentReport = await c.waitFor('the parent report', () =>
        c.replies(thread).find((m) => m.text.includes('ops found Ada: room 12.')),
      );
      const [parent, child] = await parentAndChild(c);
      expect(parent.status).toBe('completed');
      expect(child).toMatchObject({ status: 'completed', assistant: 'ops', parentRunId: parent.id });
      expect(child.conversation).toEqual(parent.conversation);

      // Two cards in the one thread: the parent's first, then the child's, which names ops and the parent run.
      const [parentCard, childCard, ...more] = await c.waitFor('both final cards', () => {
        const all = c.cards(thread);
        return all.length >= 2 && all.every((m) => m.text.includes('✅ Completed')) ? all : undefined;
      });
      expect(more).toEqual([]);
      expect(parentCard!.text).toContain('Ask ops where Ada is');
      expect(parentCard!.text).not.toContain(c.assistant('ops'));
      expect(childCard!.text).toContain(`${c.assistant('ops')} (a step of run \`${parent.id.slice(0, 8)}\`)`);
      expect(childCard!.text).toContain('Look Ada up');

      // The thread ends with the child's report, then the parent's.
      const replies = c.replies(thread);
      const childReport = replies.findIndex((m) => m.text.includes('Report of the Assistant "ops"'));
      expect(childReport).toBeGreaterThanOrEqual(0);
      expect(replies[childReport]!.text).toContain('Ada Lovelace is in room 12.');
      expect(replies.at(-1)!.id).toBe(parentReport.id);
      expect(childReport).toBe(replies.length - 2);
      expect(parentReport.text).not.toContain('Report of the Assistant');

      // At the server: the child's lookup, then the parent's last step given the child's report.
      expect(calls().map((e) => e.args?.['answer'])).toEqual(HAND_OFF_CALLS);
    });

    it("Stop on the parent's card stops the child: its call in flight is cancelled at the server, both end stopped", async () => {
      const c = await stage(waitOnOpsScript());
      const thread = await c.mention('have ops wait for me');
      await c.waitFor('the child to call sleep', () => calls().some((e) => e.name === 'sleep'));
      const [parent, child] = await parentAndChild(c);
      const heading = `${c.assistant('ops')} (a step of run \`${parent.id.slice(0, 8)}\`)`;
      const childCard = () => c.cards(thread).find((m) => m.text.includes(heading));
      await c.waitFor('the child card, running', () => childCard()!.text.includes('▶️ Running'));
      expect(childCard()!.text).toContain('Sleep a minute');

      // The parent's card is the thread's first card; the person presses its Stop, not the child's.
      const parentCard = c.cards(thread)[0]!;
      expect(parentCard.text).toContain('Have ops wait');
      expect(parentCard.text).not.toContain(c.assistant('ops'));
      await c.press(parentCard, 'stop');

      await untilStatus(c, child.id, 'stopped');
      await untilStatus(c, parent.id, 'stopped');
      await c.waitFor('the sleep to be cancelled at the server', () =>
        audit.entries().some((e) => e.type === 'cancelled' && e.name === 'sleep'),
      );
      // Both cards end showing the stop: the child's too, though only the parent's button was pressed.
      await c.waitFor('the child card, stopped', () => childCard()!.text.includes('⏹️ Stopped'));
      await c.waitFor('the parent card, stopped', () => c.cards(thread)[0]!.text.includes('⏹️ Stopped'));
      // Each run reports in the thread; the child's report says whose it is.
      await c.waitFor('both reports', () => {
        const texts = c.replies(thread).map((m) => m.text);
        return (
          texts.some((t) => t.includes('Report of the Assistant "ops":\nStopped before the minute was up.')) &&
          texts.some((t) => t.includes('Report (stopped)') && t.includes('Stopped: ops did not finish.'))
        );
      });
      // Nothing more reached the server: the parent's next step never ran.
      expect(calls().map((e) => e.name)).toEqual(['sleep']);
      const wait = (await c.store.listStepAttempts(parent.id)).find((a) => a.stepId === 'wait');
      expect(wait).toMatchObject({ status: 'cancelled' });
      expect(await c.store.listDecisions(child.id)).toContainEqual(
        expect.objectContaining({ action: 'stop', accepted: true }),
      );
    });
  });
}

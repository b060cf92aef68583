/**
 * Who may decide, and presses that arrive more than once, the same on Slack and Discord: a stranger's Approve or
 * Amend is refused privately and changes nothing while an approver may decide; a double click, or two people pressing
 * at once, changes state once; a 60-step plan and a long report are shown within the platform's limits.
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { reviewed } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from '../e2e/harness.ts';
import type { Chat, Pressed, Shown } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** What only one platform checks in these scenarios. */
export interface GuardChecks<C extends Chat> {
  /** An approver presses Approve on the card (default: Boss, an approver by id). */
  approverApproves?(chat: C, card: Shown): Promise<unknown>;
  /** After a stranger's Approve and Amend were refused. */
  strangerRefused?(chat: C, o: { approve: Pressed; amend: Pressed }): void;
  /** After three Approve presses at once ran the one step. */
  decidedOnce?(chat: C): void;
  /** The replies after the long report's first message, in the thread. */
  longReport?(chat: C, report: Shown[]): void;
}

const echoPlan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

/** The guard scenarios on the platform `start` opens. */
export function guardsSpec<C extends Chat>(name: string, start: Start<C>, only: GuardChecks<C> = {}): void {
  const chat = useChat(start);

  describe(`${name} guards, end to end on postgres`, () => {
    it("a stranger's Approve or Amend is refused privately and changes nothing; an approver may decide", async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [reviewed()],
        script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
      });
      const thread = await c.mention('say hi');
      const card = await c.waitFor('the card', () => c.card(thread));
      const run = await onlyRun(c);

      const approve = await c.press(card, 'approve', 'bob');
      const amend = await c.press(card, 'amend', 'bob');
      for (const [action, press] of [
        ['approve', approve],
        ['amend', amend],
      ] as const)
        await c.waitFor(`the refusal of ${action}`, () =>
          press.privately().some((t) => t.includes(`Only <@${c.idOf('ada')}> or an approver can ${action} this run`)),
        );
      // No form for someone who may not decide.
      expect(c.formsOpened()).toBe(0);
      only.strangerRefused?.(c, { approve, amend });
      expect((await c.store.getRun(run.id))!.status).toBe('awaiting_review');
      expect((await c.store.listDecisions(run.id)).map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
        [c.idOf('bob'), 'approve', false],
        [c.idOf('bob'), 'amend', false],
      ]);

      await (only.approverApproves?.(c, c.card(thread)) ?? c.press(c.card(thread), 'approve', 'boss'));
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Said hi.')));
      await c.steward.idle();
      expect((await c.store.getRun(run.id))!.status).toBe('completed');
    });

    it('a double click, or two people pressing at once, changes state once', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [reviewed()],
        script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
      });
      const thread = await c.mention('say hi');
      const card = await c.waitFor('the card', () => c.card(thread));
      const run = await onlyRun(c);
      // All three press the card as it was shown: the same revision.
      await Promise.all([c.press(card, 'approve'), c.press(card, 'approve'), c.press(card, 'approve', 'boss')]);
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Said hi.')));
      await c.steward.idle();
      const decisions = await c.store.listDecisions(run.id);
      expect(decisions.filter((d) => d.accepted)).toHaveLength(1);
      expect(decisions.filter((d) => !d.accepted)).toHaveLength(2);
      expect((await c.store.listStepAttempts(run.id)).map((a) => a.stepId)).toEqual(['say']);
      only.decidedOnce?.(c);
    });

    it('a 60-step plan and a long report are shown within the platform limits, through approval to the end', async () => {
      const steps = Array.from({ length: 60 }, (_, i) => ({
        id: `echo_step_number_${i + 1}`,
        tool: 'everything.echo',
        args: { message: `message ${i + 1} ${'x'.repeat(200)}` },
        description: `echo number ${i + 1}, with a long description ${'y'.repeat(200)}`,
      }));
      const c = await chat.start({
        db: 'postgres',
        servers: [reviewed()],
        settings: { maxParallel: 8 },
        script: byRole({ planner: [planReply(steps)], synthesizer: ['All sixty echoed. ' + 'z'.repeat(9_000)] }),
      });
      const thread = await c.mention('echo sixty times');
      const card = await c.waitFor('the card', () => c.card(thread));
      expect(card.text).toContain(c.bold('60.'));
      await c.press(card, 'approve');
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('All sixty echoed.')));
      await c.steward.idle();
      await c.waitFor('the final card', () => /step 60\/60/i.test(c.card(thread).text));
      const replies = c.replies(thread);
      only.longReport?.(c, replies.slice(replies.findIndex((m) => m.text.includes('All sixty echoed.'))));
      expect(c.refused()).toEqual([]);
    });
  });
}

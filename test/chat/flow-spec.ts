/**
 * The main flow in a chat, the same on Slack and Discord: a mention gets a plan card in its thread; Approve runs it
 * while the card is edited in place, paced; the report follows in the thread. Amend re-plans the same card; Pause
 * holds after the step in flight and Resume finishes; Stop cancels what is in flight at the tool server.
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, reviewed } from '../helpers/mcp-servers.ts';
import { createAuditServer, onlyRun, planReply, storedStart, waitForStoredEnd } from '../e2e/harness.ts';
import type { Chat, Pressed, Shown } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** What only one platform checks in these scenarios. */
export interface FlowChecks<C extends Chat> {
  /** Text that would ping everyone and someone on this platform, put in the report by the synthesizer. */
  pings: string;
  /** After the plan card is shown in the thread. */
  requested?(chat: C, thread: string): void | Promise<void>;
  /** After Approve was pressed on it. */
  approved?(chat: C, press: Pressed): void;
  /** After the run reported (the report as shown) and the card reached its final state. */
  reported?(chat: C, o: { thread: string; report: Shown }): void;
  /** After Amend was pressed: the form it opened, for the run. */
  amendOpened?(chat: C, o: { press: Pressed; runId: string }): void;
}

const slow = (id: string, duration: number, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: duration * 2 },
  description: 'a slow job',
  ...extra,
});
const DECISIONS = ['approve', 'amend', 'cancel', 'pause', 'resume', 'stop'];

/** The flow scenarios on the platform `start` opens. */
export function flowSpec<C extends Chat>(name: string, start: Start<C>, only: FlowChecks<C>) {
  const chat = useChat(start);

  describe.each(['postgres', 'pglite'] as const)(`${name}, end to end on %s`, (db) => {
    it('mention → plan card in the thread → Approve → the card is edited in place, paced → report in the thread', async () => {
      const plan = planReply(
        [
          slow('slow', 2),
          // The plan's own words carry the pings too: they reach the card and the step's output.
          { id: 'say', tool: 'everything.echo', args: { message: `done ${only.pings}` }, dependsOn: ['slow'] },
        ],
        { summary: 'Run the slow job, then say done' },
      );
      const c = await chat.start({
        db,
        servers: [reviewed()],
        script: byRole({ planner: [plan], synthesizer: [`The slow job finished. ${only.pings} **all good**`] }),
      });

      const thread = await c.mention('run the slow job and tell me');
      const card = await c.waitFor('the plan card', () => c.replies(thread).length === 0 && c.card(thread));
      expect(card.text).toContain('📋 Plan waiting for review · revision 0');
      expect(card.text).toContain('everything.trigger-long-running-operation');
      expect(card.actions).toEqual(expect.arrayContaining(['approve', 'amend', 'cancel']));
      await only.requested?.(c, thread);
      const run = await onlyRun(c);

      const started = Date.now();
      const press = await c.press(card, 'approve');
      expect(Date.now() - started).toBeLessThan(3_000);
      only.approved?.(c, press);
      const report = await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('all good')));
      await c.steward.idle();
      // The report does not wait for the card (a throttled edit would hold it), but the card's final state lands.
      await c.waitFor('the final card', () => c.card(thread).text.includes('✅ Completed'));
      expect(report.text).toContain(c.bold('all good'));

      // Live: the card was edited in place, running then done; progress never more than about one edit a second (the
      // final state goes at once: nothing follows it).
      const edits = c.edits(card);
      expect(edits.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < edits.length - 1; i++) expect(edits[i]!.at - edits[i - 1]!.at).toBeGreaterThanOrEqual(900);
      expect(edits.some((e) => e.text.includes('▶️ Running'))).toBe(true);
      const final = c.card(thread);
      expect(final.id).toBe(card.id);
      expect(final.text).toMatch(/step 2\/2/i);
      // No decision is left to take; the run completed, so it may be saved as a workflow.
      expect(final.actions.filter((a) => DECISIONS.includes(a))).toEqual([]);
      expect(final.actions).toContain('save-workflow');
      only.reported?.(c, { thread, report });
      expect(c.refused()).toEqual([]);

      expect((await c.store.getRun(run.id))!.status).toBe('completed');
      expect((await c.store.listDecisions(run.id)).map((d) => [d.action, d.accepted, d.actor.id])).toEqual([
        ['approve', true, c.idOf('ada')],
      ]);
    });
  });

  describe(`${name}, end to end on postgres`, () => {
    it('Amend opens a form; its text re-plans and the same card shows the new revision, which then runs', async () => {
      const first = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }]);
      const second = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello, world' } }], {
        summary: 'Say hello, world',
      });
      const c = await chat.start({
        db: 'postgres',
        servers: [reviewed()],
        script: byRole({ planner: [first, second], synthesizer: ['Said it.'] }),
      });
      const thread = await c.mention('say hello');
      const card = await c.waitFor('the card', () => c.card(thread));
      const run = await onlyRun(c);

      const press = await c.press(card, 'amend');
      expect(c.formsOpened()).toBe(1);
      only.amendOpened?.(c, { press, runId: run.id });
      await c.submitAmend('make it say hello, world');
      await c.waitFor('revision 1 on the card', () => c.card(thread).text.includes('revision 1'));
      expect(c.llm.requests.filter((r) => r.role === 'planner')[1]!.lastUserText).toContain('make it say hello, world');
      // Still one card in the thread: the new revision replaced the old in place.
      expect(c.cards(thread).map((m) => m.id)).toEqual([card.id]);
      expect(c.card(thread).labels).toContain('Amend (2 left)');

      await c.press(c.card(thread), 'approve');
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Said it.')));
      await c.steward.idle();
      expect((await c.store.listDecisions(run.id)).map((d) => [d.action, d.revision, d.accepted])).toEqual([
        ['amend', 0, true],
        ['approve', 1, true],
      ]);
    });

    it('"ask me first" stores the preference; Pause holds the run after the step in flight; Resume finishes it', async () => {
      const plan = planReply([slow('one', 2), slow('two', 1, { dependsOn: ['one'] })]);
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [plan], synthesizer: ['Both ran.'] }),
      });
      const thread = await c.mention('run two slow jobs');
      const card = await c.waitFor(
        'the auto-started card',
        () => c.card(thread).text.includes('▶️ Running') && c.card(thread),
      );
      expect(card.text).toContain('Low risk: started at once, without review');
      const run = await onlyRun(c);

      // A plan that started without review offers to ask first next time; the presser alone is told it is set.
      const asked = await c.press(card, 'ask-first');
      expect(await c.store.getReviewPreference({ id: c.idOf('ada'), channel: c.platform })).toBe('all');
      await c.waitFor('the confirmation', () => asked.privately().some((t) => /every plan/i.test(t)));

      // Pause once step one is in flight (its start stored): a Pause that comes before the start holds it unstarted,
      // as it must, and this test is about the step in flight finishing.
      await c.waitFor('step one in flight', async () =>
        (await c.store.listStepAttempts(run.id)).some((a) => a.stepId === 'one'),
      );
      await c.press(c.card(thread), 'pause');
      await c.waitFor('the paused card', () => c.card(thread).text.includes('⏸️ Paused'));
      expect(await waitForStoredEnd(c.store, run.id, 'one')).toMatchObject({ status: 'succeeded' });
      expect((await c.store.listStepAttempts(run.id)).map((a) => a.stepId)).toEqual(['one']);
      expect(c.card(thread).actions).toContain('resume');

      const resumedAt = new Date();
      await c.press(c.card(thread), 'resume');
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Both ran.')));
      await c.steward.idle();
      expect((await c.store.getRun(run.id))!.status).toBe('completed');
      // Nothing started while the run was paused: step two's stored start comes after the Resume press.
      expect((await storedStart(c.store, run.id, 'two')).getTime()).toBeGreaterThanOrEqual(resumedAt.getTime());
    });

    it('Stop cancels the calls in flight at the tool server, starts nothing more, and keeps the finished results', async () => {
      const audit = createAuditServer();
      chat.cleanup(() => audit.remove());
      const plan = planReply([
        { id: 'quick', tool: 'everything.echo', args: { message: 'kept' } },
        { id: 'long_a', tool: 'audit.sleep', args: { ms: 20_000 }, dependsOn: ['quick'] },
        { id: 'long_b', tool: 'audit.sleep', args: { ms: 20_001 }, dependsOn: ['quick'] },
        { id: 'after', tool: 'audit.sleep', args: { ms: 1 }, dependsOn: ['long_a', 'long_b'] },
      ]);
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig(), audit.config()],
        script: byRole({ planner: [plan], synthesizer: ['Stopped after quick.'] }),
      });
      const thread = await c.mention('quick then two long ones');
      await c.waitFor(
        'both long calls at the server',
        () => audit.entries().filter((e) => e.type === 'call' && (e.args?.ms as number) >= 20_000).length === 2,
      );
      const run = await onlyRun(c);

      await c.press(c.card(thread), 'stop');
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Stopped after quick.')));
      await c.steward.idle();
      // What the tool server itself saw: the two calls in flight, both cancelled; the last step was never sent.
      const seen = audit.entries().map((e) => [e.type, e.args?.ms ?? null]);
      expect(
        seen
          .filter(([t]) => t === 'call')
          .map(([, ms]) => ms)
          .sort(),
      ).toEqual([20_000, 20_001]);
      expect(seen.filter(([t]) => t === 'cancelled')).toHaveLength(2);
      expect((await c.store.getRun(run.id))!.status).toBe('stopped');
      const attempts = await c.store.listStepAttempts(run.id);
      expect(attempts.find((a) => a.stepId === 'quick')).toMatchObject({ status: 'succeeded' });
      expect(JSON.stringify(attempts.find((a) => a.stepId === 'quick')!.output)).toContain('kept');
      expect(
        attempts
          .filter((a) => a.status === 'cancelled')
          .map((a) => a.stepId)
          .sort(),
      ).toEqual(['long_a', 'long_b']);
      await c.waitFor('the stopped card', () => c.card(thread).text.includes('⏹️ Stopped'));
    });
  });
}

/**
 * Breakpoints from a card, the same on Slack and Discord: the card's picker sets and clears them and the run holds
 * after the step still picked; a suggested breakpoint is offered, not set, until "Add suggested breakpoints" sets it.
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { echo, reviewed } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from '../e2e/harness.ts';
import { createNewRun } from '../store/builders.ts';
import type { Chat } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** What only one platform shows in these scenarios. */
export interface BreakpointChecks {
  /** The controls a hold message offers itself (where it offers Resume, the person resumes from it). */
  holdOffers: string[];
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The breakpoint scenarios on the platform `start` opens. */
export function breakpointsSpec<C extends Chat>(name: string, start: Start<C>, only: BreakpointChecks): void {
  const chat = useChat(start);

  describe(`${name} breakpoints from the card, end to end on postgres`, () => {
    it('the breakpoint picker sets and clears breakpoints; the run holds after the step still picked', async () => {
      const plan = planReply([echo('a', 'one'), echo('b', 'two', ['a']), echo('c', 'three', ['b'])]);
      const c = await chat.start({
        db: 'postgres',
        servers: [reviewed()],
        script: byRole({ planner: [plan], synthesizer: ['All three.'] }),
      });
      const thread = await c.mention('three echoes');
      const card = await c.waitFor('the card', () => c.card(thread));
      const run = await onlyRun(c);
      expect(card.picked).toEqual([]);

      await c.pick(card, ['a', 'b']);
      await c.waitFor('a and b picked on the card', () => c.card(thread).picked.join() === 'a,b');
      expect((await c.store.getRun(run.id))!.breakpoints).toEqual([
        { stepId: 'a', when: 'after' },
        { stepId: 'b', when: 'after' },
      ]);
      expect(c.card(thread).text).toMatch(new RegExp(`${escaped(c.bold('2.'))}.*breakpoint after`));

      await c.pick(c.card(thread), ['a']);
      await c.waitFor('only a picked on the card', () => c.card(thread).picked.join() === 'a');
      expect((await c.store.getRun(run.id))!.breakpoints).toEqual([{ stepId: 'a', when: 'after' }]);

      await c.press(c.card(thread), 'approve');
      const hold = await c.waitFor('the hold after a', () =>
        c.replies(thread).find((m) => m.text.includes('Holding after step `a`')),
      );
      expect(hold.text).toContain('one');
      expect(hold.actions).toEqual(expect.arrayContaining(only.holdOffers));
      await c.waitFor('the paused card', () => c.card(thread).text.includes('⏸️ Paused'));
      expect((await c.store.getRun(run.id))!.status).toBe('paused');
      expect((await c.store.listStepAttempts(run.id)).map((a) => a.stepId)).toEqual(['a']);
      // Steps already run leave the picker.
      expect(c.card(thread).picked).toEqual([]);

      await c.press(only.holdOffers.includes('resume') ? hold : c.card(thread), 'resume');
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('All three.')));
      await c.steward.idle();
      expect(c.replies(thread).filter((m) => m.text.includes('Holding'))).toHaveLength(1);
      expect((await c.store.listDecisions(run.id)).map((d) => [d.action, d.accepted])).toEqual([
        ['breakpoint', true],
        ['breakpoint', true],
        ['approve', true],
        ['resume', true],
      ]);
    });

    it('a suggested breakpoint is offered, not set: "Add suggested breakpoints" sets it and the run holds before its step', async () => {
      const plan = planReply([echo('a', 'one'), echo('b', 'two', ['a'])]);
      const c = await chat.start({
        db: 'postgres',
        servers: [reviewed()],
        script: byRole({ planner: [plan], synthesizer: ['stopped'] }),
      });
      // Ada stopped a run using everything.echo earlier.
      const ada = { id: c.idOf('ada'), channel: c.platform };
      const earlier = createNewRun({ requester: ada });
      await c.store.createRun(earlier);
      const stop = { actorId: ada.id, channel: c.platform, action: 'stop', tools: ['everything.echo'] };
      await c.store.appendEvent(earlier.id, 'intervened', stop, new Date());
      const thread = await c.mention('two echoes');
      const card = await c.waitFor('the card', () => c.card(thread));
      const runId = (await c.store.listRunsOf(ada, { activeOnly: true, limit: 5 }))[0]!.id;
      expect(card.text).toContain('before a: you stopped a run using everything.echo before');
      expect(card.actions).toContain('suggested');
      expect((await c.store.getRun(runId))!.breakpoints).toEqual([]);

      await c.press(card, 'suggested');
      await c.waitFor('the offer gone from the card', () => !c.card(thread).actions.includes('suggested'));
      expect((await c.store.getRun(runId))!.breakpoints).toEqual([{ stepId: 'a', when: 'before' }]);
      expect(c.card(thread).picked).toEqual(['a']);
      expect(c.card(thread).text).toMatch(new RegExp(`${escaped(c.bold('1.'))}.*breakpoint before`));
      expect(c.card(thread).text).not.toContain('Suggested breakpoints');

      await c.press(c.card(thread), 'approve');
      await c.waitFor('the hold before a', () =>
        c.replies(thread).find((m) => m.text.includes('Holding before step `a`')),
      );
      expect(await c.store.listStepAttempts(runId)).toEqual([]);
    });
  });
}

/**
 * A person's preferences by `/steward`, the same on Slack and Discord: `review none|risky|all` and `suggestions
 * off|on` are stored for the person and confirmed to them alone; "all" makes a low-risk plan wait, and suggestions off
 * takes the breakpoint offer off the next card until on brings it back.
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from '../e2e/harness.ts';
import { createNewRun } from '../store/builders.ts';
import type { Chat } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** What only one platform checks in these scenarios. */
export interface PreferenceChecks<C extends Chat> {
  /** Right after the stage started. */
  started?(chat: C): void;
}

const echoes = planReply([
  { id: 'a', tool: 'everything.echo', args: { message: 'one' } },
  { id: 'b', tool: 'everything.echo', args: { message: 'two' }, dependsOn: ['a'] },
]);

/** The preference scenarios on the platform `start` opens. */
export function preferencesSpec<C extends Chat>(name: string, start: Start<C>, only: PreferenceChecks<C> = {}): void {
  const chat = useChat(start);

  describe(`${name} /steward preferences, end to end on postgres`, () => {
    it('review none|risky|all is stored for the person and confirmed privately; "all" makes a low-risk plan wait', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [echoes] }),
      });
      only.started?.(c);
      const before = c.posted();
      for (const preference of ['none', 'risky', 'all'] as const) {
        const answers = await c.command(`review ${preference}`, 'ada');
        expect(answers).toHaveLength(1);
        expect(answers[0]).toMatch(/^Noted\. From now on /);
        expect(await c.store.getReviewPreference({ id: c.idOf('ada'), channel: c.platform })).toBe(preference);
      }
      // Nothing of that was posted where others see it.
      expect(c.posted()).toBe(before);

      // Every tool of this server is low risk: the plan would start at once, but Ada asked to see every plan.
      const thread = await c.mention('say hi');
      const card = await c.waitFor('the card', () => c.card(thread));
      expect(card.text).toContain('📋 Plan waiting for review');
      expect(card.actions).toContain('approve');
    });

    it('suggestions off is stored for the person and confirmed privately: the next card offers no breakpoint; on brings the offer back', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
        script: byRole({ planner: [echoes, echoes] }),
      });
      // Ada stopped a run using everything.echo earlier: her next plan using it would be offered a breakpoint.
      const ada = { id: c.idOf('ada'), channel: c.platform };
      const earlier = createNewRun({ requester: ada });
      await c.store.createRun(earlier);
      const stop = { actorId: ada.id, channel: c.platform, action: 'stop', tools: ['everything.echo'] };
      await c.store.appendEvent(earlier.id, 'intervened', stop, new Date());

      const before = c.posted();
      expect(await c.command('suggestions off', 'ada')).toEqual([
        'Noted. From now on your plan cards offer no breakpoints (`/steward suggestions on` brings them back).',
      ]);
      expect(c.posted()).toBe(before);
      expect(await c.store.getBreakpointSuggestions(ada)).toBe(false);
      const quiet = await c.mention('two echoes');
      const card = await c.waitFor('the card', () => c.card(quiet));
      expect(card.text).toContain('📋 Plan waiting for review');
      expect(card.text).not.toContain('Suggested breakpoints');
      expect(card.actions).not.toContain('suggested');

      const on = await c.command('suggestions on', 'ada');
      expect(on.join('\n')).toMatch(/^Noted\. From now on your plan cards offer breakpoints /);
      expect(await c.store.getBreakpointSuggestions(ada)).toBe(true);
      const offered = await c.mention('two echoes again');
      const again = await c.waitFor('the second card', () => c.card(offered));
      expect(again.text).toContain('before a: you stopped a run using everything.echo before');
      expect(again.text).toContain('`/steward suggestions off` stops these offers.');
      expect(again.actions).toContain('suggested');
    });
  });
}

/**
 * Replies in a run's thread, the same on Slack and Discord: while the card waits, a reply classified as an amendment
 * re-plans the same card; while it runs, a status question is answered from the database and an amendment re-plans
 * only the steps not yet run; chatter is left alone, and after the run ended replies are not for Steward. When the
 * planner fails, the requester hears why in the thread.
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from '../e2e/harness.ts';
import type { Chat } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

const roles = (c: Chat) => c.llm.requests.map((r) => r.role);
const say = (message: string, summary: string) =>
  planReply([{ id: 'say', tool: 'everything.echo', args: { message } }], { summary });
const slowThenSay = (message: string) =>
  planReply([
    { id: 'one', tool: 'everything.trigger-long-running-operation', args: { duration: 2, steps: 4 } },
    { id: 'two', tool: 'everything.echo', args: { message }, dependsOn: ['one'] },
  ]);

/** What only one platform checks in these scenarios. */
export interface ThreadChecks<C extends Chat> {
  /** After the planner failed and the requester was told in `thread`. */
  plannerFailed?(chat: C, thread: string): void | Promise<void>;
}

/** The thread scenarios on the platform `start` opens. */
export function threadSpec<C extends Chat>(name: string, start: Start<C>, only: ThreadChecks<C> = {}): void {
  const chat = useChat(start);

  describe(`${name} thread replies, end to end on postgres`, () => {
    it('a reply while the plan waits for review is classified as an amendment and re-plans the same card', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
        script: byRole({ planner: [say('hi', 'Say hi'), say('hi and bye', 'Say hi and bye')], classifier: ['amend'] }),
      });
      const thread = await c.mention('say hi');
      const card = await c.waitFor('the card', () => c.card(thread));

      await c.reply(thread, 'also say bye');
      await c.waitFor('revision 1 on the card', () => c.card(thread).text.includes('revision 1'));
      expect(c.card(thread).id).toBe(card.id);
      expect(c.card(thread).text).toContain('Say hi and bye');
      expect(roles(c)).toEqual(['planner', 'classifier', 'planner']);
      expect(c.llm.requests[1]!.system.startsWith('[steward:classifier]')).toBe(true);
      expect(c.llm.requests[2]!.lastUserText).toContain('also say bye');
    });

    it('a status question while running is answered in the thread from the database, with no planner call', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [slowThenSay('done')], classifier: ['status'], synthesizer: ['Done.'] }),
      });
      const thread = await c.mention('slow job then say done');
      await c.waitFor('the running card', () => c.card(thread).text.includes('▶️ Running'));

      await c.reply(thread, 'how is it going?', 'bob');
      const answer = await c.waitFor('the status answer', () =>
        c.replies(thread).find((m) => /steps finished/.test(m.text)),
      );
      expect(answer.text).toMatch(/0\/2 steps finished/);
      expect(roles(c)).toEqual(['planner', 'classifier']);
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Done.')));
      await c.steward.idle();
    });

    it('an amendment by reply while running re-plans only the steps not yet run; the card keeps what ran', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({
          planner: [slowThenSay('hi'), slowThenSay('bye')],
          classifier: ['amend'],
          synthesizer: ['Said bye.'],
        }),
      });
      const thread = await c.mention('slow job then say hi');
      await c.waitFor('the running card', () => c.card(thread).text.includes('⏳'));
      const run = await onlyRun(c);

      await c.reply(thread, 'make the last step say bye instead');
      await c.waitFor('revision 1 on the card', () => c.card(thread).text.includes('revision 1'));
      // Step one kept its progress: it is not shown as not yet started in the new revision.
      expect(c.card(thread).text).not.toContain(`⚪ ${c.bold('1.')}`);
      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Said bye.')));
      await c.steward.idle();
      const attempts = await c.store.listStepAttempts(run.id);
      expect(attempts.filter((a) => a.stepId === 'one')).toHaveLength(1);
      expect(attempts.find((a) => a.stepId === 'two')).toMatchObject({ status: 'succeeded', args: { message: 'bye' } });
    });

    it('chatter classified as unrelated is left alone, and replies after the run ended are not for Steward', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [slowThenSay('x')], classifier: ['unrelated'], synthesizer: ['Done.'] }),
      });
      const thread = await c.mention('slow job then say x');
      await c.waitFor('the running card', () => c.card(thread).text.includes('▶️ Running'));
      const before = c.replies(thread).length;
      await c.reply(thread, 'nice weather today', 'bob');
      expect(roles(c)).toEqual(['planner', 'classifier']);
      expect(c.replies(thread)).toHaveLength(before);

      await c.waitFor('the report', () => c.replies(thread).find((m) => m.text.includes('Done.')));
      await c.steward.idle();
      await c.waitFor('the final card', () => c.card(thread).text.includes('✅ Completed'));
      const after = c.replies(thread).length;
      await c.reply(thread, 'thanks!');
      expect(roles(c)).toEqual(['planner', 'classifier', 'synthesizer']);
      expect(c.replies(thread)).toHaveLength(after);
      expect(await c.db.db.selectFrom('runs').select('id').execute()).toHaveLength(1);
    });

    it('when the planner fails, the requester hears why in the thread, and nothing runs', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: ['this is not a plan', 'still not', 'nope'] }),
      });
      const thread = await c.mention('say hi');
      await c.waitFor('the notice', () =>
        c.replies(thread).find((m) => m.text.includes('I could not make a valid plan')),
      );
      await c.steward.idle();
      await only.plannerFailed?.(c, thread);
      expect(c.cards(thread)).toEqual([]);
    });
  });
}

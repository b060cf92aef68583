/**
 * Assistants in a chat (issue 16), the same on Slack and Discord: `/steward assistant …` goes to the Assistant
 * commands (changes refused for people who are not approvers, answered privately), and asking the Assistant "ops"
 * makes a run of it, planned with only its granted tools, whose card names it.
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from '../e2e/harness.ts';
import type { Chat } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** What only one platform does in these scenarios. */
export interface AssistantChecks<C extends Chat> {
  /** Asks the Assistant `name` for `request` as people do on the platform; resolves with the run's thread. */
  ask(chat: C, name: string, request: string): Promise<string>;
  /** Once ops exists with its grant, before anyone asks it. */
  setUp?(chat: C): Promise<void>;
}

/** The Assistant scenarios on the platform `start` opens. */
export function assistantsSpec<C extends Chat>(name: string, start: Start<C>, only: AssistantChecks<C>): void {
  const chat = useChat(start);

  describe(`Assistants on ${name}, end to end on postgres`, () => {
    it('only approvers change Assistants; asking ops is its run, planned with only its granted tools, and its card names it', async () => {
      const c = await chat.start({
        db: 'postgres',
        servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
        script: byRole({
          planner: [
            planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Echo hi' }),
          ],
          synthesizer: ['Said hi.'],
        }),
      });
      expect(await c.command('assistant create ops "Operations"', 'bob')).toEqual([
        'Only approvers can create or change Assistants.',
      ]);
      expect((await c.command('assistant create ops "Operations"', 'boss'))[0]).toMatch(/^Created the Assistant "ops"/);
      expect(await c.command('assistant ops grant everything.echo allow', 'boss')).toEqual([
        '"ops": allow the tool everything.echo.',
      ]);
      // Anyone may read the list.
      expect((await c.command('assistants', 'bob')).join('\n')).toContain('ops: Operations (1 grant; default deny)');
      await only.setUp?.(c);

      const thread = await only.ask(c, 'ops', 'say hi');
      const card = await c.waitFor('the card', () => c.card(thread));
      expect(card.text).toContain(c.assistant('ops'));
      expect(card.text).toContain('Echo hi');
      expect(await onlyRun(c)).toMatchObject({ assistant: 'ops', request: 'say hi' });
      const planner = c.llm.requests.find((r) => r.role === 'planner')!;
      expect(planner.system).toContain('- everything.echo');
      expect(planner.system).not.toContain('everything.get-sum');
    });
  });
}

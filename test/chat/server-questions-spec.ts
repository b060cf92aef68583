/**
 * A server's question mid-call (MCP elicitation), the same on Slack and Discord, against
 * `@modelcontextprotocol/server-everything`'s own `trigger-elicitation-request` (a form of 13 fields; the server
 * offers the tool only to a client that declares elicitation): answered through the form (Discord: in parts of five
 * fields), declined, timed out, pressed by someone who may not answer, and a Stop while it is open. These are the
 * scenario matrix's rows for "a question is open".
 */
import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, waitForStoredEnd } from '../e2e/harness.ts';
import type { Chat, Shown } from './chat.ts';
import { useChat, type Start } from './spec-kit.ts';

/** The question spec on the platform `start` opens. */
export function serverQuestionsSpec<C extends Chat>(name: string, start: Start<C>) {
  const chat = useChat(start);

  /** Ada asks; the one step (risk low: it starts at once) asks her a question; resolves with its message. */
  async function asked(
    settings: { questionTimeoutMs?: number } = {},
  ): Promise<{ c: C; thread: string; question: Shown }> {
    const c = await chat.start({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'low' } })],
      script: byRole({
        planner: planReply([{ id: 'ask', tool: 'everything.trigger-elicitation-request', args: {}, dependsOn: [] }]),
        synthesizer: 'Done.',
      }),
      settings,
      questions: true,
    });
    const thread = await c.mention('ask me for my details');
    const question = await c.waitFor('the question in the thread', () =>
      c.replies(thread).find((m) => m.text.includes('asks a question during step ask')),
    );
    return { c, thread, question };
  }

  const outputOf = async (c: C) => {
    const end = await waitForStoredEnd(c.store, (await onlyRun(c)).id, 'ask');
    return JSON.stringify(end.output);
  };
  const stored = (c: C) =>
    c.db.db
      .withTables<{ server_questions: { outcome: string | null; answered_by: { id: string } | null } }>()
      .selectFrom('server_questions')
      .select(['outcome', 'answered_by'])
      .execute();
  /** The question's message as it stands now. */
  const now = (c: C, thread: string, question: Shown) => c.replies(thread).find((m) => m.id === question.id)!;

  describe(`${name}: a server asks a question mid-call`, () => {
    it("shows the server's words as the server's, with Answer and Decline; the form's answer reaches the server", async () => {
      const { c, thread, question } = await asked();
      expect(question.text).toContain("These are the server's words, not Steward's");
      expect(question.text).toContain('Please provide inputs for the following fields:');
      expect(question.labels).toEqual(['Answer…', 'Decline']);
      const told = await c.answerQuestion(question, { String: 'Ada Lovelace', Integer: '7' });
      expect(told.join('\n')).not.toMatch(/Only the person/);
      const output = await outputOf(c);
      expect(output).toContain('Name: Ada Lovelace');
      expect(output).toContain('Favorite Integer: 7');
      const [row] = await stored(c);
      expect(row?.outcome).toBe('accepted');
      expect(row?.answered_by?.id).toBe(c.idOf('ada'));
      await c.waitFor('the question to say it was answered', () =>
        /was answered by/.test(now(c, thread, question).text),
      );
      expect(now(c, thread, question).labels).toEqual([]);
    });

    it('a wrong entry is refused with the reason; nothing reaches the server until it is right', async () => {
      const { c, question } = await asked();
      const told = await c.answerQuestion(question, { String: 'Ada', Integer: '500' });
      expect(told.join('\n')).toMatch(/at most 100/);
      expect((await stored(c))[0]?.outcome).toBeNull();
      await c.answerQuestion(question, { String: 'Ada', Integer: '5' });
      expect(await outputOf(c)).toContain('Favorite Integer: 5');
    });

    it('Decline sends decline', async () => {
      const { c, thread, question } = await asked();
      await c.pressQuestion(question, 'decline');
      expect(await outputOf(c)).toContain('User declined to provide the requested information');
      await c.waitFor('the question to say it was declined', () =>
        /was declined by/.test(now(c, thread, question).text),
      );
    });

    it('someone who is neither the requester nor an approver is refused privately, and the question stays open', async () => {
      const { c, question } = await asked();
      expect((await c.pressQuestion(question, 'answer', 'bob')).join('\n')).toMatch(
        /Only the person who asked for this run, or an approver, can answer its questions/,
      );
      expect((await c.pressQuestion(question, 'decline', 'bob')).join('\n')).toMatch(/Only the person who asked/);
      expect((await stored(c))[0]?.outcome).toBeNull();
      // An approver may.
      await c.pressQuestion(question, 'decline', 'boss');
      expect(await outputOf(c)).toContain('User declined');
    });

    it('unanswered by its deadline it is declined, and the message says no one answered in time', async () => {
      const { c, thread, question } = await asked({ questionTimeoutMs: 1500 });
      await c.waitFor('the deadline', () => /no one answered in time/.test(now(c, thread, question).text), 10_000);
      expect(await outputOf(c)).toContain('User declined');
      expect((await stored(c))[0]?.outcome).toBe('timedOut');
    });

    it('Stop while the question is open cancels it; the message says the run was stopped', async () => {
      const { c, thread, question } = await asked();
      await c.press(c.card(thread), 'stop');
      await c.waitFor('the question to say so', () => /the run was stopped/.test(now(c, thread, question).text));
      await c.waitFor('the run to stop', async () => (await onlyRun(c)).status === 'stopped');
      expect((await stored(c))[0]?.outcome).toBe('stopped');
    });
  });
}

/**
 * A run's thread on Discord archives itself after its inactivity time, and Discord then refuses to edit the messages
 * in it (50083; the fake follows the reference, test/fakes/fake-discord-rest.ts). Steward opens each run's thread for
 * the longest time Discord allows, and a card that meets an archived thread opens it again and changes all the same.
 */
import { afterEach, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('a thread that archives itself mid-run: the card still follows the run, and the thread is open again', async () => {
  const step = { id: 'wait', tool: 'everything.trigger-long-running-operation', args: { duration: 2, steps: 2 } };
  h = await startDiscordHarness({
    db: 'postgres',
    servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
    script: byRole({
      planner: [planReply([step], { summary: 'Wait a little' })],
      // A slow report: the card's change when the step ends comes first, into the archived thread.
      synthesizer: [{ text: 'Waited.', delayMs: 4_000 }],
    }),
  });
  const thread = await h.mention('wait a little');
  const card = await h.waitFor('the card', () => h!.card(thread));
  const opened = h.discord.callsTo('POST', '/channels/:channel/messages/:message/threads');
  expect(opened.map((c) => (c.body as { auto_archive_duration?: number }).auto_archive_duration)).toEqual([10080]);

  await h.press(card, 'approve');
  const header = () => shownText(h!.card(thread).message).split('\n')[0] ?? '';
  await h.waitFor('the run running', () => /Running/.test(header()));
  // The run outlasts the thread's inactivity time.
  h.discord.archiveThread(thread);

  // The step's end reaches the card before the report is written: Discord refused the edit, the thread was opened
  // again, and the edit landed.
  await h.waitFor('the step done on the card', () => /✅ \*\*1\.\*\*/.test(shownText(h!.card(thread).message)));
  expect(h.replies(thread).map((m) => shownText(m.message))).not.toContainEqual(expect.stringContaining('Waited.'));
  expect(h.discord.calls.filter((c) => c.code === 50083).length).toBeGreaterThan(0);
  expect(h.discord.callsTo('PATCH', '/channels/:channel').map((c) => c.body)).toEqual([{ archived: false }]);

  await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Waited.')));
  await h.waitFor('the card says completed', () => /Completed/.test(header()));
  const meta = (h.discord.threads.find((t) => t.id === thread) as { thread_metadata?: { archived: boolean } })
    .thread_metadata;
  expect(meta?.archived).toBe(false);
  expect(h.logs.filter((l) => l.startsWith('error') || l.startsWith('warn'))).toEqual([]);
});

/**
 * A run's images reach its Discord thread as attachments (issue 29), through the real discord.js client and the fake
 * Discord's multipart Create Message: one message after the report, at most 10 attachments (Discord's limit per
 * message), its text naming each file left out and why.
 */
import { afterEach, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_TINY_IMAGE, everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('discord: attaches the first 10 images to one message after the report and names the one left out', async () => {
  const steps = Array.from({ length: 11 }, (_, i) => ({
    id: `s${i + 1}`,
    tool: 'everything.get-tiny-image',
    args: {},
  }));
  h = await startDiscordHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({ planner: [planReply(steps)], synthesizer: ['Eleven logos.'] }),
  });
  const harness = h;
  const thread = await harness.mention('show me the logo eleven times');
  const withFiles = await harness.waitFor('the message with the files', () =>
    harness.replies(thread).find((m) => m.message.attachments.length > 0),
  );
  const replies = harness.replies(thread);
  const report = replies.findIndex((m) => (m.message.content ?? '').includes('Eleven logos.'));
  expect(report).toBeGreaterThanOrEqual(0);
  expect(report).toBeLessThan(replies.indexOf(withFiles));
  expect(withFiles.message.attachments.map((a) => a.filename)).toEqual(
    Array.from({ length: 10 }, (_, i) => `s${i + 1}-1.png`),
  );
  for (const f of withFiles.files ?? []) expect(f.bytes.toString('base64')).toBe(EVERYTHING_TINY_IMAGE);
  expect(withFiles.files).toHaveLength(10);
  expect(withFiles.message.content).toBe(
    'Files from this run (10):\n• s11-1.png (image/png, 3.9 kB) from step s11: not attached (at most 10 files go with a report here)',
  );
});

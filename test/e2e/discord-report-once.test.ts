/**
 * One report, once (issue 26), on Discord: a process that posts a run's report and dies before noting it sent leaves
 * the run owing it, and the process that takes the run over sends the stored report again. Here the first process's
 * store never answers `markReportSent`, so that process stands still right after posting, as one killed there; the
 * harness then restarts Steward and the new process recovers the run. Each report message carries a nonce of the run
 * and its part with `enforce_nonce`, so the fake Discord, as Discord, hands back the messages already posted.
 */
import { afterEach, expect, it } from 'vitest';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A run store that never notes a report sent: the report is posted, and the process goes no further with it. */
class StallsAfterReport extends PgRunStore {
  reached = false;
  override markReportSent(): Promise<void> {
    this.reached = true;
    return new Promise<void>(() => undefined);
  }
}

// Long enough for two Discord messages (2,000 characters each), so both parts must be found again by their nonces.
const REPORT = `The sum of 2 and 3 is 5. ${'Checked twice. '.repeat(180)}`;

it('discord: a report posted just before a kill and sent again by the takeover is shown once', async () => {
  let first: StallsAfterReport | undefined;
  h = await startDiscordHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({
      planner: [planReply([{ id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } }])],
      synthesizer: [REPORT],
    }),
    store: (db) => (first = new StallsAfterReport(db)),
  });
  const harness = h;
  const thread = await harness.mention('what is 2 + 3?');
  const reportIn = () => harness.replies(thread).filter((m) => (m.message.content ?? '').includes('Checked twice.'));
  const postsToThread = () =>
    harness.discord.callsTo('POST', '/channels/:channel/messages').filter((c) => c.path.includes(thread));

  await harness.waitFor('the report posted and not noted as sent', () => first?.reached);
  const shown = reportIn().map((m) => m.message.id);
  expect(shown).toHaveLength(2);
  const before = postsToThread().length;

  await harness.restart();
  const run = await onlyRun(harness);
  await harness.waitFor('the takeover to send the report and note it', async () => {
    const row = await harness.db.db.selectFrom('runs').select('report_due').where('id', '=', run.id).execute();
    return row[0]?.report_due === false;
  });

  // What the channel holds: the one report, in its two messages, as first posted.
  expect(reportIn().map((m) => m.message.id)).toEqual(shown);
  // The takeover did send it again (two posts), and Discord answered each with the message already there.
  const resent = postsToThread().slice(before);
  expect(resent.map((c) => c.status)).toEqual([200, 200]);
  const nonces = (calls: typeof resent) => calls.map((c) => (c.body as { nonce?: string }).nonce);
  const firstPosts = postsToThread()
    .slice(0, before)
    .filter((c) => (c.body as { nonce?: string }).nonce !== undefined);
  expect(nonces(resent)).toEqual(nonces(firstPosts));
  expect(new Set(nonces(resent)).size).toBe(2);
  expect(resent.every((c) => (c.body as { enforce_nonce?: boolean }).enforce_nonce === true)).toBe(true);
});

/**
 * The dashboard's spend page in a real browser (Debian's chromium, driven by playwright-core): after a run on the
 * console, signed in with the console's `dashboard` link, the Spend link shows the workspace's, the channel's, the
 * person's and each model's spend today and this month with each cap and what is left, figures as the caps count
 * them. Someone not an approver sees only their own line and their channels (Bob's spend in another Slack channel is
 * not shown to Ada); an approver sees every channel and person. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import { formatUsd, NO_SPEND_CAPS, spendWindows } from '../../src/engine/spend.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

let h: Harness | undefined;
let context: BrowserContext | undefined;
let profile: string | undefined;
afterEach(async () => {
  await context?.close();
  context = undefined;
  if (profile) rmSync(profile, { recursive: true, force: true });
  profile = undefined;
  await h?.close();
  h = undefined;
});

async function openBrowser(): Promise<Page> {
  profile = mkdtempSync(join(tmpdir(), 'steward-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    viewport: { width: 1280, height: 900 },
  });
  return context.pages()[0] ?? context.newPage();
}

/** $5.00 a day for the workspace, $2.00 per channel, $1.00 per person. */
const caps = {
  ...NO_SPEND_CAPS,
  workspace: { day: 5_000_000, month: null },
  channel: { day: 2_000_000, month: null },
  person: { day: 1_000_000, month: null },
};

describeNeeding(
  existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing; .ci/run installs it`,
  'the spend page in chromium',
  () => {
    it.each([
      ['not an approver: the workspace, her own line and her channel only', false],
      ['an approver: every channel and person', true],
    ])('Ada, %s', async (_name, approver) => {
      h = await startHarness({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({
          planner: { text: planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }]) },
          synthesizer: { text: 'Said hi.', usage: { input: 2_000, output: 1_000 } },
        }),
        settings: { spend: { caps, defaultPricePerMillion: 15 }, approvers: approver ? ['console:ada'] : [] },
        dashboard: true,
      });
      const harness = h;
      // Bob spent $1.50 today in another Slack channel (the workspace's total counts it too).
      const w = spendWindows(new Date());
      // Written as the ledger writes it (the table's totals are not for plain inserts).
      await sql`INSERT INTO spend_totals (scope, key, period, starts, micro_usd) VALUES
        ('workspace', '', 'day', ${w.day}::date, 1500000),
        ('person', 'slack:U0BOB', 'day', ${w.day}::date, 1500000),
        ('channel', 'slack:C0OTHER', 'day', ${w.day}::date, 1500000)`.execute(harness.db.db);
      await harness.type('Echo hi.');
      await harness.waitFor(/=== Report \(completed\) ===\nSaid hi\./);
      await harness.steward.idle();
      const held = async (scope: string, key: string) =>
        Number(
          (
            await harness.db.db
              .selectFrom('spend_totals')
              .select('micro_usd')
              .where('scope', '=', scope)
              .where('key', '=', key)
              .where('period', '=', 'day')
              .executeTakeFirstOrThrow()
          ).micro_usd,
        );
      const ada = await held('person', 'console:ada');
      const workspace = await held('workspace', '');
      expect(workspace).toBe(1_500_000 + ada);

      const page = await openBrowser();
      const from = harness.output().length;
      await harness.type('dashboard');
      const line = await harness.waitFor(/sign-in link \(works once, for 15 minutes\): (\S+)/, 15_000, from);
      await page.goto(line.split(': ').at(-1) ?? '');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/runs$/);
      await page.getByRole('link', { name: 'Spend' }).click();
      await page.waitForURL(/\/spend$/);

      const cells = (section: string) =>
        page
          .locator(`#${section} tbody tr`)
          .evaluateAll((rows) =>
            rows.map((r) => [...r.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())),
          );
      // Bob's $1.50 was seeded for today only: this month's total is what the run spent.
      expect(await cells('workspace')).toEqual([
        ['Workspace', formatUsd(workspace), `${formatUsd(5_000_000 - workspace)} of $5.00`, formatUsd(ada), 'no cap'],
      ]);
      const adaRow = [
        'ada (console:ada)',
        formatUsd(ada),
        `${formatUsd(1_000_000 - ada)} of $1.00`,
        formatUsd(ada),
        'no cap',
      ];
      const bobRow = ['slack:U0BOB', '$1.50', '$0.00 of $1.00', '$0.00', 'no cap'];
      const consoleRow = [
        'console:console',
        formatUsd(ada),
        `${formatUsd(2_000_000 - ada)} of $2.00`,
        formatUsd(ada),
        'no cap',
      ];
      const other = ['slack:C0OTHER', '$1.50', '$0.50 of $2.00', '$0.00', 'no cap'];
      if (approver) {
        expect(await cells('by-person')).toEqual([adaRow, bobRow].sort((a, b) => a[0]!.localeCompare(b[0]!)));
        expect(await cells('by-channel')).toEqual([consoleRow, other]);
        expect(await page.locator('main').innerText()).toContain('As an approver you see every channel and person.');
      } else {
        expect(await cells('by-person')).toEqual([adaRow]);
        expect(await cells('by-channel')).toEqual([consoleRow]);
        expect(await page.locator('main').innerText()).not.toContain('U0BOB');
      }
      const models = (await cells('by-model')).map((r) => r[0]);
      expect(models).toEqual(expect.arrayContaining(['planner-model', 'synth-model']));
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({
        path: join(ARTIFACTS, `dashboard-spend-${approver ? 'approver' : 'person'}.png`),
        fullPage: true,
      });
    });
  },
);

/**
 * The story of a run in a real browser (Debian's chromium, driven by playwright-core), over runs stored in a real
 * PostgreSQL run store (issue 33): reading a step's tool and arguments, following a parent run to its child and back,
 * and seeing the time Steward was down drawn as a gap after the interrupted attempt's bar, not inside it.
 * Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createDashboardApp } from '../../src/web/dashboard-app.ts';
import { startDashboardServer, type DashboardServer } from '../../src/web/dashboard-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { DAN, SECRET } from '../web/dashboard-fixtures.ts';
import { seedDelegation, seedRestartRun, seedStepsRun } from '../web/dashboard-story-fixtures.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

describeNeeding(
  existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing; .ci/run installs it`,
  'the story of a run in chromium',
  () => {
    let database: TestDatabase;
    let server: DashboardServer;
    let data: PgDashboard;
    let store: PgRunStore;
    let context: BrowserContext;
    let profile: string;
    let page: Page;
    let url = '';

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      store = new PgRunStore(database.db);
      server = await startDashboardServer({
        port: 0,
        app: (port) => {
          url = `http://127.0.0.1:${port}`;
          data = new PgDashboard(database.db, { baseUrl: url });
          return createDashboardApp({
            data,
            secret: SECRET,
            publicUrl: url,
            clock: () => new Date(),
            approvers: [`slack:${DAN.id}`],
            personServers: ['fs'],
            workspaceServers: ['wiki'],
          });
        },
      });
      profile = mkdtempSync(join(tmpdir(), 'steward-chromium-'));
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
        viewport: { width: 1280, height: 900 },
      });
      page = context.pages()[0] ?? (await context.newPage());
      await page.goto(await data.issue(DAN, new Date()));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/runs$/);
    });
    afterAll(async () => {
      await context?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
      await server?.close();
      await database?.close();
    });

    const shot = (name: string) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      return page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
    };

    it("reads a step's tool, its arguments as planned and as resolved, whom it ran as and why each attempt ended", async () => {
      const run = await seedStepsRun(store);
      await page.goto(`${url}/runs/${run.id}`);
      const publish = page.locator('div.step[data-step="publish"]');
      expect(await publish.locator('.tool').innerText()).toBe('wiki.create_page');
      expect(await publish.locator('p.as').innerText()).toBe("Ran as the workspace (an approver's connection)");
      expect(await publish.locator('code.args.planned').innerText()).toBe(
        '{"body":⟨steps.list.output.content[0].text⟩,"title":"Files"}',
      );
      const resolved = await publish.locator('tr.attempt[data-attempt="1"] code.args.resolved').innerText();
      expect(resolved).toMatch(/^\{"body":"a\.txt <b>b\.md<\/b> x+…/);
      expect(await publish.locator('tr.attempt[data-attempt="1"] td.ended').innerText()).toMatch(
        /^interrupted by a restart/,
      );
      const list = page.locator('div.step[data-step="list"]');
      expect(await list.locator('p.as').innerText()).toBe('Ran as Ada (their own account)');
      expect(await list.locator('tr.attempt[data-attempt="1"] td.ended').innerText()).toBe(
        'failed: tool_error: ENOENT: no such directory',
      );
      // The token Ada typed is on no part of the page; the markup in the arguments stayed text.
      const text = await page.locator('main').innerText();
      expect(text).not.toContain('sk-live-typed-by-ada');
      expect(text).toContain('"apiKey":"•••"');
      expect(await page.locator('main img[src="x"]').count()).toBe(0);
      // 1,000 characters of arguments with no space in them wrap: the page is no wider than the window.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
      await shot('dashboard-story-steps.png');
    });

    it('follows a parent run to the child its step delegated to, and back', async () => {
      const { parent, child } = await seedDelegation(database, store);
      await page.goto(`${url}/runs/${parent.id}`);
      await page.locator('div.step[data-step="ask"] p.child a').click();
      await page.waitForURL(new RegExp(`/runs/${child.id}$`));
      expect(await page.locator('p.lineage').innerText()).toMatch(/^Ran as Assistant researcher · delegated by run /);
      await page.locator('p.lineage a.parent').click();
      await page.waitForURL(new RegExp(`/runs/${parent.id}$`));
      expect(await page.locator('h1').innerText()).toBe('ask the researcher');
    });

    it('shows the time Steward was down as a gap after the interrupted attempt, not as part of its bar', async () => {
      const run = await seedRestartRun(store);
      await page.goto(`${url}/runs/${run.id}`);
      const interrupted = page.locator('#timeline g.bar[data-step="slow"][data-attempt="1"]');
      const bar = await interrupted.locator('rect:not(.gap):not(.wait)').boundingBox();
      const gap = await interrupted.locator('rect.gap').boundingBox();
      const retry = await page
        .locator('#timeline g.bar[data-step="slow"][data-attempt="2"] rect:not(.wait)')
        .boundingBox();
      if (!bar || !gap || !retry) throw new Error('the bars and the gap are drawn');
      // 20 s known, 600 s down, on one scale: the gap is thirty times the bar, and begins where the bar ends.
      expect(gap.width / bar.width).toBeGreaterThan(25);
      expect(Math.abs(gap.x - (bar.x + bar.width))).toBeLessThan(1.5);
      // The retry starts after the gap, once the run was taken over.
      expect(retry.x).toBeGreaterThan(gap.x + gap.width);
      expect(await page.locator('#timeline g.legend[data-legend="Steward down"]').isVisible()).toBe(true);
      await shot('dashboard-story-restart-gap.png');
    });
  },
);

/**
 * The dashboard in a real browser (Debian's chromium, driven by playwright-core): signing in with the console's
 * `dashboard` link, the run list, a finished run's page with its graph and timeline, hostile tool output staying
 * text, and a live run's page changing as its steps end, without a reload. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');
/** Set to write docs/dashboard-run.png, the picture in README.md and docs/dashboard.md, from this run. */
const DOCS_SHOT = process.env.STEWARD_DOCS_SCREENSHOT === '1';

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
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  return context.pages()[0] ?? context.newPage();
}

/** Types `dashboard` in the console and signs in with the link it prints. */
async function signIn(harness: Harness, page: Page): Promise<void> {
  const from = harness.output().length;
  await harness.type('dashboard');
  const line = await harness.waitFor(/sign-in link \(works once, for 15 minutes\): (\S+)/, 15_000, from);
  const link = line.split(': ').at(-1) ?? '';
  await page.goto(link);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/runs$/);
}

const shot = (page: Page, name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
};

describeNeeding(
  existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing; .ci/run installs it`,
  'the dashboard in chromium',
  () => {
    it('lists runs and shows a finished run with its graph, timeline and hostile output as text', async () => {
      const hostile =
        '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><a href="javascript:window.pwned=3">click</a>';
      const plan = planReply([
        { id: 'weather', tool: 'everything.get-structured-content', args: { location: 'Chicago' } },
        { id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } },
        { id: 'say', tool: 'everything.echo', args: { message: hostile }, dependsOn: ['weather', 'sum'] },
      ]);
      h = await startHarness({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [plan], synthesizer: ['Chicago is fine; 2 + 3 = 5.'] }),
        dashboard: true,
      });
      await h.type('What is the weather in Chicago, and 2 + 3? Then echo something.');
      await h.waitFor(/=== Report \(completed\) ===/);
      await h.steward.idle();
      const run = await onlyRun(h);

      const page = await openBrowser();
      await signIn(h, page);
      await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
      expect(await page.locator('tbody').innerText()).toContain('What is the weather in Chicago');
      await shot(page, 'dashboard-runs.png');

      await page.getByRole('link', { name: run.id.slice(0, 8) }).click();
      await page.waitForURL(new RegExp(`/runs/${run.id}$`));
      const graph = page.locator('#plan-graph');
      await expect.poll(() => graph.locator('g.node').count()).toBe(3);
      for (const step of ['weather', 'sum', 'say'])
        expect(await graph.locator(`g.node[data-step="${step}"]`).getAttribute('data-state')).toBe('succeeded');
      expect(await page.locator('#timeline g.bar').count()).toBe(3);
      expect(await graph.isVisible()).toBe(true);
      expect(await page.locator('#timeline').isVisible()).toBe(true);
      // The tool's words are on the page as text; none of them ran or became a link.
      expect(await page.locator('main').innerText()).toContain('<script>window.pwned = 1</script>');
      expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
      expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
      expect(await page.locator('main').innerText()).toContain('Chicago is fine; 2 + 3 = 5.');
      await shot(page, 'dashboard-run-finished.png');
      if (DOCS_SHOT) await page.screenshot({ path: join(process.cwd(), 'docs', 'dashboard-run.png'), fullPage: true });
    });

    it("a live run's page changes as its steps end, without a reload", async () => {
      const plan = planReply([
        { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 3, steps: 3 } },
        { id: 'after', tool: 'everything.echo', args: { message: 'done' }, dependsOn: ['slow'] },
      ]);
      h = await startHarness({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [plan], synthesizer: ['It finished.'] }),
        dashboard: true,
      });
      const page = await openBrowser();
      await signIn(h, page);
      await h.type('Run the slow operation, then say done.');
      const store = h.store;
      const run = await waitUntil('the run to exist', () => onlyRun(h!));
      await waitUntil('the slow step to start', async () =>
        (await store.listStepAttempts(run.id)).some((a) => a.stepId === 'slow'),
      );

      await page.goto(`${h.dashboard!.url}/runs/${run.id}`);
      const slow = page.locator('#plan-graph g.node[data-step="slow"]');
      expect(await slow.getAttribute('data-state')).toBe('running');
      await page.evaluate(() => ((window as { sameDocument?: boolean }).sameDocument = true));
      await shot(page, 'dashboard-run-live-before.png');

      await expect.poll(() => slow.getAttribute('data-state'), { timeout: 20_000 }).toBe('succeeded');
      await expect
        .poll(() => page.locator('#plan-graph g.node[data-step="after"]').getAttribute('data-state'), {
          timeout: 20_000,
        })
        .toBe('succeeded');
      // The same document: the page was updated in place, not reloaded.
      expect(await page.evaluate(() => (window as { sameDocument?: boolean }).sameDocument)).toBe(true);
      await shot(page, 'dashboard-run-live-after.png');
    });
    it("shows a running step's latest progress on the timeline, then the run's image under the page's CSP", async () => {
      const plan = planReply([
        { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 8, steps: 4 } },
        { id: 'logo', tool: 'everything.get-tiny-image', args: {}, dependsOn: ['slow'] },
      ]);
      h = await startHarness({
        db: 'postgres',
        servers: [everythingStdioConfig()],
        script: byRole({ planner: [plan], synthesizer: ['Here is the logo.'] }),
        dashboard: true,
      });
      const page = await openBrowser();
      await signIn(h, page);
      await h.type('Run the slow operation, then show the logo.');
      const run = await waitUntil('the run to exist', () => onlyRun(h!));
      await page.goto(`${h.dashboard!.url}/runs/${run.id}`);
      // What the server said last (1 / 4, 2 / 4, …), stored on the attempt at the card's pace, and shown live.
      const said = page.locator('#timeline g.bar[data-step="slow"] tspan.progress');
      await expect.poll(() => said.textContent(), { timeout: 20_000 }).toMatch(/^[1-3] \/ 4$/);
      const stored = await h.store.listStepAttempts(run.id);
      expect(stored.find((a) => a.stepId === 'slow')?.endedAt).toBeNull();
      await shot(page, 'dashboard-run-progress.png');

      await expect
        .poll(() => page.locator('#plan-graph g.node[data-step="logo"]').getAttribute('data-state'), {
          timeout: 30_000,
        })
        .toBe('succeeded');
      // The ended step shows no progress any more; the image loads from the dashboard itself, as its CSP allows.
      await expect.poll(() => said.count()).toBe(0);
      const img = page.locator('img[alt^="logo-1.png (image/png"]');
      await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(20);
      const src = (await img.getAttribute('src')) ?? '';
      const served = await page.request.get(`${h.dashboard!.url}${src}`);
      expect(served.headers()['content-type']).toBe('image/png');
      expect(served.headers()['x-content-type-options']).toBe('nosniff');
      // A file the attempt does not have is not found.
      expect((await page.request.get(`${h.dashboard!.url}${src.replace(/files\/0$/, 'files/1')}`)).status()).toBe(404);
      await shot(page, 'dashboard-run-image.png');
    });
  },
);

/**
 * A person connects their own account in a real browser (Debian's chromium, driven by playwright-core), end to end on
 * the console: signed in to the dashboard, they open the link `connections connect` printed, press its button, and
 * click Allow on the authorization server's own consent page (test/helpers/oauth-mcp-server.ts with `consentPage`).
 * Steward's origin is `localhost` and the authorization server `127.0.0.1`, so the browser crosses sites both ways:
 * the connect page's CSP must let its form's redirect reach the authorization server, and the SameSite=Lax binding
 * cookie must come back on the callback. A browser that is not signed in gets "confirm in chat" and connects nobody
 * until the person answers; Deny connects nobody. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { connectOrigin } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');
/** The console's person (test/e2e/harness.ts). */
const ADA: Actor = { channel: 'console', id: 'ada', name: 'ada' };

let h: Harness | undefined;
let oauth: OAuthMcpServer | undefined;
const contexts: BrowserContext[] = [];
const profiles: string[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
  for (const p of profiles.splice(0)) rmSync(p, { recursive: true, force: true });
  await h?.close();
  await oauth?.close();
  h = undefined;
  oauth = undefined;
});

async function openBrowser(): Promise<Page> {
  const profile = mkdtempSync(join(tmpdir(), 'steward-chromium-'));
  profiles.push(profile);
  const context = await chromium.launchPersistentContext(profile, {
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
    viewport: { width: 1100, height: 800 },
  });
  contexts.push(context);
  return context.pages()[0] ?? context.newPage();
}

const shot = (page: Page, name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
};

/** The link in the console's latest "Connect tracker: <link>" line after `from`. */
async function connectLink(harness: Harness, from: number): Promise<string> {
  const line = await harness.waitFor(/Connect tracker: \S+/, 15_000, from);
  const link = /(http:\/\/localhost:\d+\/connect\/[\w-]+)/.exec(line)?.[1];
  if (!link) throw new Error(`no link in: ${line}`);
  return link;
}

/** Opens the link, presses its button, and answers the authorization server's consent page with `button`. */
async function authorize(page: Page, link: string, button: 'Allow' | 'Deny', name: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: 'Continue to tracker' }).click();
  await page.getByRole('heading', { name: /^Allow .* to use your account/ }).waitFor();
  await shot(page, `connect-${name}-consent.png`);
  await page.getByRole('button', { name: button }).click();
  // The callback's page (Steward's origin again) has replaced the consent page.
  await page.waitForURL(/\/oauth\/callback\?/);
  await page.locator('h1').waitFor();
  await shot(page, `connect-${name}-done.png`);
}

describeNeeding(
  existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing; .ci/run installs it`,
  'connecting an account in chromium',
  () => {
    it('signed in to the dashboard, Allow connects at once and the run goes as them; elsewhere it waits; Deny connects nobody', async () => {
      oauth = await startOAuthMcpServer({ consentAs: 'ada@tracker', consentPage: true });
      const origin = connectOrigin(oauth, 'localhost');
      const plan = planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' });
      h = await startHarness({
        db: 'postgres',
        servers: [serverConfig('tracker', { url: oauth.url, auth: 'person', risk: 'low' })],
        script: byRole({ planner: [plan], synthesizer: ['Done.'] }),
        setup: origin.setup,
      });
      const harness = h;
      await harness.steward.recover();

      // Deny on the consent page: the callback says so, and nothing is connected.
      const denying = await openBrowser();
      let from = harness.output().length;
      await harness.type('connections connect tracker');
      await authorize(denying, await connectLink(harness, from), 'Deny', 'deny');
      expect(await denying.locator('h1').textContent()).toBe('Not connected');
      expect(await denying.locator('p').textContent()).toContain('(access_denied)');
      expect(await harness.host.hasConnection('tracker', ADA)).toBe(false);

      // A browser with no dashboard session of Ada's: allowed, but it waits for her answer in chat.
      const elsewhere = await openBrowser();
      from = harness.output().length;
      await harness.type('connections connect tracker');
      await authorize(elsewhere, await connectLink(harness, from), 'Allow', 'elsewhere');
      expect(await elsewhere.locator('h1').textContent()).toBe('Almost connected: confirm in chat');
      await harness.waitFor(/\? Someone allowed Steward to use an account on `tracker` as yours/, 15_000, from);
      expect(await harness.host.hasConnection('tracker', ADA)).toBe(false);
      await harness.type('connections notme tracker');
      await harness.waitFor(/i Forgotten: nothing runs with that account on `tracker`/, 15_000, from);

      // Her own browser, signed in to the dashboard as her: Allow connects her at once.
      const own = await openBrowser();
      const signIn = await new PgDashboard(harness.db.db, { baseUrl: origin.web }).issue(ADA, new Date());
      await own.goto(signIn);
      await own.getByRole('button', { name: 'Sign in' }).click();
      await own.waitForURL(/\/runs$/);
      from = harness.output().length;
      await harness.type('connections connect tracker');
      await authorize(own, await connectLink(harness, from), 'Allow', 'signed-in');
      expect(await own.locator('h1').textContent()).toBe('Connected tracker');
      expect(await harness.host.hasConnection('tracker', ADA)).toBe(true);
      expect(oauth.consentsShown).toBe(3);

      // Her plan runs as her account, with no link.
      from = harness.output().length;
      await harness.type('who am I on the tracker?');
      await harness.waitFor(/=== Report \(completed\) ===/, 15_000, from);
      expect(oauth.calls.map((c) => c.subject)).toEqual(['ada@tracker']);
    });
  },
);

/** The composition root with SLACK_BOT_TOKEN set: Slack in HTTP mode on PGlite, as `npm start` would run it. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { startApp } from '../../src/app.ts';
import { byRole, startFakeLlm } from '../fakes/fake-llm-server.ts';
import { startFakeSlack } from '../fakes/fake-slack-server.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';
import { parsePromText } from '../helpers/prom-text.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';
import { createMention, eventEnvelope, sendSigned } from './slack-requests.ts';

it('the composition root serves Slack in HTTP mode: a signed mention gets a plan card in its thread', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-slack-app-'));
  writeFileSync(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'], risk: 'medium' } },
    }),
  );
  const llm = await startFakeLlm(
    byRole({ planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }])] }),
  );
  const slack = await startFakeSlack();
  const out = new PassThrough();
  let printed = '';
  out.on('data', (c: Buffer) => (printed += c.toString()));
  const env = {
    OPENAI_BASE_URL: llm.baseURL,
    // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
    STEWARD_QUICK_ANSWERS: 'off',
    STEWARD_MODEL: 'm',
    DATA_DIR: dir,
    MCP_CONFIG: join(dir, 'mcp.json'),
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: 'sekrit-123456',
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
  };
  const app = await startApp({ env, input: new PassThrough(), output: out });
  try {
    expect(printed).toMatch(/Slack: listening on port \d+ at \/slack\/events\./);
    const port = app.platforms.slack?.port;
    const mention = createMention({ text: 'say hi' }, slack.botUserId);
    const res = await sendSigned(
      `http://127.0.0.1:${port}/slack/events`,
      'sekrit-123456',
      eventEnvelope(mention, slack.botUserId),
      'application/json',
    );
    expect(res.status).toBe(200);
    const card = await waitUntil('the plan card', () => slack.callsOf('chat.postMessage')[0], { timeoutMs: 15_000 });
    expect(card.response.ok).toBe(true);
    expect(card.args.thread_ts).toBe(mention.ts);
    expect(JSON.stringify(card.args)).toContain('everything.echo');
  } finally {
    await app.close();
    await llm.close();
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it("shows on /metrics the calls waiting in Slack's outbox and the 429s that held them, by method", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-slack-metrics-'));
  writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: {} }));
  const llm = await startFakeLlm(
    byRole({ planner: [JSON.stringify({ summary: 'hi', needsTools: false, answer: 'Hello.', steps: [] })] }),
  );
  const slack = await startFakeSlack();
  const env = {
    OPENAI_BASE_URL: llm.baseURL,
    STEWARD_QUICK_ANSWERS: 'off',
    STEWARD_MODEL: 'm',
    DATA_DIR: dir,
    MCP_CONFIG: join(dir, 'mcp.json'),
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: 'sekrit-123456',
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    STEWARD_HEALTH_PORT: '0',
  };
  const app = await startApp({ env, input: new PassThrough(), output: new PassThrough() });
  const scrape = async () => {
    const text = await (await fetch(`http://127.0.0.1:${app.health?.port}/metrics`)).text();
    const samples = parsePromText(text).samples;
    return (name: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  };
  try {
    expect((await scrape())('steward_outbox_pending', { platform: 'slack' })).toBe(0);
    // Slack's 429 carries Retry-After in whole seconds (https://docs.slack.dev/apis/web-api/rate-limits).
    slack.throttle({ method: 'chat.postMessage', times: 1, retryAfterS: 2 });
    const mention = createMention({ text: 'say hello' }, slack.botUserId);
    const res = await sendSigned(
      `http://127.0.0.1:${app.platforms.slack?.port}/slack/events`,
      'sekrit-123456',
      eventEnvelope(mention, slack.botUserId),
      'application/json',
    );
    expect(res.status).toBe(200);
    // Counted once Steward read the 429; the answer then waits out its Retry-After in the outbox.
    const limited = { platform: 'slack', method: 'chat.postMessage' };
    await waitUntil('the 429 counted', async () => (await scrape())('steward_outbox_rate_limited_total', limited), {
      timeoutMs: 15_000,
    });
    const held = await scrape();
    expect(held('steward_outbox_rate_limited_total', limited)).toBe(1);
    expect(slack.rateLimited['chat.postMessage']).toBe(1);
    expect(held('steward_outbox_pending', { platform: 'slack' })).toBeGreaterThanOrEqual(1);
    await waitUntil('the answer, sent again', () =>
      slack.callsOf('chat.postMessage').some((c) => c.response.ok && JSON.stringify(c.args).includes('Hello.')),
    );
    await waitUntil(
      'the outbox empty again',
      async () => (await scrape())('steward_outbox_pending', { platform: 'slack' }) === 0,
    );
  } finally {
    await app.close();
    await llm.close();
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

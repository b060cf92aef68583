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

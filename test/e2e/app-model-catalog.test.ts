/** The model catalog through the composition root: models.json picks each role's model, and its prices cost the run. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { seedPglite } from '../helpers/databases.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';

let app: App | undefined;
let llm: FakeLlm | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('roles use their catalog models on each provider, start-up warns of a planner that does not reason, and history shows the cost', async () => {
  llm = await startFakeLlm(
    byRole({
      planner: [{ text: planReply([], { needsTools: false, answer: 'Paris.' }), usage: { input: 4_000, output: 500 } }],
    }),
  );
  dir = mkdtempSync(join(tmpdir(), 'steward-catalog-'));
  await seedPglite(dir);
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      models: {
        quick: {
          spec: 'anthropic:claude-quick',
          callsTools: true,
          usdPerMillionTokens: { input: 1, output: 5, cachedInput: 0.1 },
        },
        deep: { spec: 'openai:gpt-deep', reasons: true },
      },
      roles: { planner: 'quick', synthesizer: 'deep' },
    }),
  );
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const input = new PassThrough();
  app = await startApp({
    env: {
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'sk-catalog-key-0123456789',
      ANTHROPIC_API_KEY: 'sk-ant-catalog-key-0123456789',
      ANTHROPIC_BASE_URL: llm.anthropicBaseURL,
      STEWARD_MODEL_CATALOG: catalog,
      DATA_DIR: dir,
      MCP_CONFIG: join(dir, 'missing-mcp.json'),
    },
    input,
    output,
  });
  expect(printed).toContain(
    `! The planner works best with a model marked "reasons": true in ${catalog}; "quick" is not.`,
  );

  input.write('What is the capital of France?\n');
  await waitUntil('the answer', () => printed.includes('Paris.'), { details: () => printed });
  expect(llm.requests.filter((r) => r.role === 'planner').map((r) => [r.api, r.model])).toEqual([
    ['anthropic', 'claude-quick'],
  ]);
  input.write('history\n');
  // 4,000 × $1 + 500 × $5 per million: $0.0065.
  await waitUntil('the cost in history', () => printed.includes('Model use: 1 call, 4,500 tokens, $0.0065.'), {
    details: () => printed,
  });
  expect(llm.failures).toEqual([]);
});

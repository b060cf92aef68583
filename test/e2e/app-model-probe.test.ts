/** At start the composition root checks the model once: a model that refuses the key is a warning, not a stop. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';

let app: App | undefined;
let llm: FakeLlm | undefined;
let db: TestDatabase | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  await llm?.close();
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a model that refuses the key at start: Steward warns on the terminal and in its log, and starts anyway', async () => {
  db = await createTestDatabase('postgres');
  llm = await startFakeLlm();
  llm.setModelList({ status: 401 });
  dir = mkdtempSync(join(tmpdir(), 'steward-probe-'));
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const env = {
    DATABASE_URL: testDatabaseUrlFor(db.name),
    OPENAI_BASE_URL: llm.baseURL,
    // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
    STEWARD_QUICK_ANSWERS: 'off',
    OPENAI_API_KEY: 'sk-probe-key-0123456789',
    STEWARD_MODEL: 'm',
    DATA_DIR: dir,
    MCP_CONFIG: join(dir, 'missing-mcp.json'),
  };
  app = await startApp({ env, input: new PassThrough(), output });
  const host = new URL(llm.baseURL).host;
  expect(printed).toContain(
    `! The model for planner, classifier, synthesizer, llm_step, butler (openai:m) did not answer a check at start: The OpenAI-compatible server at ${host} refused the API key (HTTP 401). Steward starts anyway; requests fail until the model answers.`,
  );
  expect(printed).toContain('Steward is ready.');
  expect(llm.modelListRequests()).toBe(1);
  expect(printed).not.toContain('sk-probe-key');
});

it("the issue 33 trap: a local server with models.json.example copied says at start which roles' models it lacks, and where they came from", async () => {
  db = await createTestDatabase('postgres');
  llm = await startFakeLlm();
  llm.setModelList({ ids: ['llama3.1:latest'] });
  dir = mkdtempSync(join(tmpdir(), 'steward-probe-'));
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const env = {
    DATABASE_URL: testDatabaseUrlFor(db.name),
    OPENAI_BASE_URL: llm.baseURL,
    STEWARD_MODEL: 'llama3.1',
    STEWARD_MODEL_CATALOG: join(import.meta.dirname, '../../models.json.example'),
    DATA_DIR: dir,
    MCP_CONFIG: join(dir, 'missing-mcp.json'),
  };
  app = await startApp({ env, input: new PassThrough(), output });
  const host = new URL(llm.baseURL).host;
  expect(printed).toContain(
    `! The model for planner (openai:o4-mini) is not among the models the OpenAI-compatible server at ${host} lists (llama3.1:latest): requests for it will fail`,
  );
  expect(printed).toContain('    planner: o4-mini (openai:o4-mini), from roles.planner of ');
  expect(printed).toContain('Steward is ready.');
});

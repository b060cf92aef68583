/**
 * At start, under the status line, one block says which database, which model each role uses and where that came
 * from, which channels, and each MCP server with its tool count (issue 33): the real composition root, PostgreSQL,
 * a real MCP server over stdio.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';

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

it('says which database, which model each role uses and from where, the channels and each server with its tools', async () => {
  db = await createTestDatabase('postgres');
  llm = await startFakeLlm();
  dir = mkdtempSync(join(tmpdir(), 'steward-summary-'));
  writeFileSync(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'] },
        remote: { url: 'https://mcp.example.com/mcp', disabled: true },
      },
    }),
  );
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const url = new URL(testDatabaseUrlFor(db.name));
  app = await startApp({
    env: {
      DATABASE_URL: url.href,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'sk-summary-key-0123456789',
      STEWARD_MODEL: 'm',
      STEWARD_MODEL_PLANNER: 'openai:big',
      DATA_DIR: dir,
      MCP_CONFIG: join(dir, 'mcp.json'),
    },
    input: new PassThrough(),
    output,
  });
  const tools = app.tools.listTools().length;
  expect(tools).toBeGreaterThan(5);
  const status = printed.split('\n').findIndex((l) => l.startsWith('Steward: PostgreSQL server;'));
  expect(printed.split('\n').slice(status + 1, status + 10)).toEqual([
    `  Database: PostgreSQL at ${url.host}, database ${db.name}, as ${url.username} (DATABASE_URL).`,
    '  Models:',
    '    planner: openai:big, from STEWARD_MODEL_PLANNER',
    '    classifier: openai:m, from STEWARD_MODEL',
    '    report writer: openai:m, from STEWARD_MODEL',
    '    llm steps: openai:m, from STEWARD_MODEL',
    '    quick answers: openai:m, from STEWARD_MODEL',
    '  Channels: console.',
    `  MCP servers: everything (${tools} tools), remote (disabled).`,
  ]);
  expect(printed).not.toContain('sk-summary-key');
});

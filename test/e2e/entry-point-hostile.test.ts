/**
 * Hostile output through the real entry point (issue 11): `src/main.ts` on the console, in a child process, with an
 * MCP server that answers one call with 20 MB and another with terminal escape sequences, and a model whose report
 * carries them too. What the person would notice is checked: the oversized answer is refused with its size and the
 * server keeps serving (counted by the server itself), and the terminal receives no escape sequence raw.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';

const ROOT = join(import.meta.dirname, '../..');
const TSX = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx')).href;
const FLOOD = join(ROOT, 'test/fixtures/flood-server.mjs');

const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\x1b[3;1H\r✔ Approved \u202egnp.exe';

let llm: FakeLlm | undefined;
let db: TestDatabase | undefined;
let dir: string | undefined;
let child: ChildProcessWithoutNullStreams | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await llm?.close();
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  child = llm = db = dir = undefined;
});

describe('hostile output through the real entry point (console, PostgreSQL)', () => {
  it('a 20 MB answer is refused with its size while the server keeps serving; escape sequences reach the terminal escaped', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-hostile-'));
    db = await createTestDatabase('postgres');
    const calls = join(dir, 'calls.jsonl');
    const page = planReply([{ id: 'page', tool: 'flood.flood', args: { bytes: 20 * 1024 * 1024 } }]);
    const say = planReply([{ id: 'say', tool: 'flood.echo', args: { text: HOSTILE } }]);
    llm = await startFakeLlm(
      byRole({ planner: [page, say], synthesizer: ['The page was too large.', `Done. ${HOSTILE}`] }),
    );
    writeFileSync(
      join(dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: { flood: { command: process.execPath, args: [FLOOD], env: { CALLS_LOG: calls } } },
      }),
    );
    child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src/main.ts')], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: testDatabaseUrlFor(db.name),
        DATA_DIR: join(dir, 'data'),
        MCP_CONFIG: join(dir, 'mcp.json'),
        OPENAI_BASE_URL: llm.baseURL,
        // Quick answers off: these scripts have no butler turn (test/e2e/quick-answers.test.ts turns them on).
        STEWARD_QUICK_ANSWERS: 'off',
        OPENAI_API_KEY: 'sk-hostile-test',
      },
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
    const waitFor = (p: RegExp) =>
      waitUntil(String(p), () => p.test(out), { timeoutMs: 60_000, details: () => `output:\n${out}` });

    await waitFor(/Steward: PostgreSQL server; 3 tools from 1 MCP server/);
    child.stdin.write('read the page\n');
    await waitFor(/=== Report \(failed\) ===/);
    // The same server, asked again: it is still connected.
    child.stdin.write('say it\n');
    await waitFor(/=== Report \(completed\) ===/);
    child.stdin.write('quit\n');
    await new Promise((resolve) => child!.once('exit', resolve));

    // The oversized answer was refused, named for its size, and the same server answered the next call.
    expect(out).toMatch(/output too large: 20971\d{3} bytes/);
    const received = existsSync(calls)
      ? readFileSync(calls, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { name: string; pid: number })
      : [];
    expect(received.map((c) => c.name)).toEqual(['flood', 'echo']);
    // One server process answered both: the oversized answer did not cost the connection.
    expect(new Set(received.map((c) => c.pid)).size).toBe(1);
    // Not one escape, carriage return or bidi control reached the terminal; the person sees them escaped.
    expect([...out].filter((c) => ['\x1b', '\x07', '\r', '\u202e'].includes(c))).toEqual([]);
    expect(out).toContain('\\x1b]0;pwned\\x07\\x1b[2J');
    expect(out).toContain('\\u202egnp.exe');
  }, 120_000);
});

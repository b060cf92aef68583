/**
 * A newcomer follows the README's first run (issue 33): in an empty folder, `cp .env.example .env` with the
 * local-model setup filled in, `cp mcp.json.example mcp.json`, `mkdir -p workspace`, the Assistants and local
 * catalog examples copied too, then the real entry point with nothing in its environment but PATH and HOME: the
 * embedded database, the console, the example's MCP servers through npx. It starts with the model lines printed, a
 * request is planned, approved and run against the filesystem server, and git sees no file of theirs untracked.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { entryPointArgs } from '../helpers/entry-point.ts';
import { itNeeding } from '../helpers/needs.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply } from './harness.ts';

const ROOT = join(import.meta.dirname, '../..');
const gitMissing = spawnSync('git', ['--version']).error ? 'git is not on the PATH' : undefined;
let llm: FakeLlm | undefined;
let dir: string | undefined;
let child: ChildProcessWithoutNullStreams | undefined;
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

itNeeding(
  gitMissing,
  'the README first run with a local model: the model lines at start, a plan approved and run, nothing untracked',
  async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-newcomer-'));
    const workspace = join(dir, 'workspace');
    llm = await startFakeLlm(
      byRole({
        butler: [
          { text: '', toolCalls: [{ id: 'call_1', name: 'plan_request', args: { reason: 'it writes a file' } }] },
        ],
        planner: [
          planReply([
            { id: 'write', tool: 'fs.write_file', args: { path: join(workspace, 'note.txt'), content: 'hello' } },
          ]),
        ],
        synthesizer: ['Wrote note.txt.'],
      }),
    );
    // The repository's own files a clone has, and its installed packages (so npx finds the servers, as in a clone).
    for (const f of [
      '.gitignore',
      '.env.example',
      'mcp.json.example',
      'assistants.json.example',
      'models.local.json.example',
    ])
      copyFileSync(join(ROOT, f), join(dir, f));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    git('init', '-q');
    git(
      'add',
      '.gitignore',
      '.env.example',
      'mcp.json.example',
      'assistants.json.example',
      'models.local.json.example',
    );

    // Step 2, the local-model setup: .env from the example, with OPENAI_BASE_URL and STEWARD_MODEL filled in.
    const env = readFileSync(join(dir, '.env.example'), 'utf8')
      .replace(/^OPENAI_BASE_URL=$/m, `OPENAI_BASE_URL=${llm.baseURL}`)
      .replace(/^STEWARD_MODEL=$/m, 'STEWARD_MODEL=llama3.1');
    writeFileSync(join(dir, '.env'), env);
    // Step 3, and the optional examples docs/ points at for this setup.
    copyFileSync(join(dir, 'mcp.json.example'), join(dir, 'mcp.json'));
    mkdirSync(workspace);
    copyFileSync(join(dir, 'assistants.json.example'), join(dir, 'assistants.json'));
    copyFileSync(join(dir, 'models.local.json.example'), join(dir, 'models.json'));

    // Step 4: npm start, with nothing set but what any shell has.
    child = spawn(process.execPath, entryPointArgs(), {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
    const waitFor = (p: RegExp, timeoutMs = 60_000) =>
      waitUntil(String(p), () => p.test(out), { timeoutMs, details: () => `output:\n${out}` });
    await waitFor(/Steward is ready\./);
    // Progress while the slow parts start, before the status line.
    expect(out.indexOf('Opening the embedded database in data/pglite…\n')).toBe(0);
    expect(out.indexOf('Starting 2 MCP server(s): fs, everything…\n')).toBeLessThan(out.indexOf('Steward: embedded'));
    expect(out.indexOf('Starting 2 MCP server(s)')).toBeGreaterThan(0);
    expect(out).toMatch(/^Steward: embedded PostgreSQL in data\/pglite; \d+ tools from 2 MCP server\(s\)\.$/m);
    expect(out).toContain('  Models: local (openai:llama3.1) for every role, from the roles of models.json.\n');
    expect(out).toMatch(/^ {2}MCP servers: fs \(\d+ tools\), everything \(\d+ tools\), remote \(disabled\)\.$/m);
    expect(out).toContain('Assistants: ops.');
    expect(out).not.toMatch(/^Configuration error|^✖/m);

    // Step 5: ask, approve the high-risk write, read the report.
    child.stdin.write('write a note saying hello into note.txt\n');
    await waitFor(/Type "approve"/);
    child.stdin.write('approve\n');
    await waitFor(/=== Report \(completed\) ===\nWrote note\.txt\./);
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('hello');
    child.stdin.write('quit\n');
    await new Promise((r) => child?.once('exit', r));

    // Everything the newcomer created (.env, mcp.json, assistants.json, models.json, workspace/, data/) is ignored.
    expect(git('status', '--porcelain', '--untracked-files=all').stdout).toBe(
      'A  .env.example\nA  .gitignore\nA  assistants.json.example\nA  mcp.json.example\nA  models.local.json.example\n',
    );
  },
);

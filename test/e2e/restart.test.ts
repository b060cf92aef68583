/**
 * Crash mid-run: the real entry point (`src/main.ts`) in a child process, killed with SIGKILL while a step is
 * in flight, then started again on the same database. Finished steps must not run again.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { entryPointArgs } from '../helpers/entry-point.ts';
import { EVERYTHING_SCRIPT } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { planReply } from './harness.ts';

interface Proc {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  waitFor: (p: RegExp, timeoutMs?: number) => Promise<void>;
  type: (line: string) => void;
}

let llm: FakeLlm;
let db: TestDatabase;
let dir: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(async () => {
  db = await createTestDatabase('postgres');
  dir = mkdtempSync(join(tmpdir(), 'steward-restart-'));
});
afterEach(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  children.length = 0;
  await llm?.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

function startSteward(mcpServer: Record<string, unknown>): Proc {
  writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { everything: mcpServer } }));
  const child = spawn(process.execPath, entryPointArgs(), {
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
      OPENAI_API_KEY: 'sk-restart-test',
    },
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
  return {
    child,
    output: () => out,
    type: (line) => child.stdin.write(`${line}\n`),
    async waitFor(p, timeoutMs = 20_000) {
      await waitUntil(String(p), () => p.test(out), { timeoutMs, details: () => `output:\n${out}` });
    },
  };
}

async function kill(p: Proc): Promise<void> {
  p.child.kill('SIGKILL');
  await new Promise((r) => p.child.once('exit', r));
}

const everything = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [EVERYTHING_SCRIPT, 'stdio'],
  ...extra,
});
const plan = planReply([
  { id: 'first', tool: 'everything.echo', args: { message: 'once' } },
  {
    id: 'slow',
    tool: 'everything.trigger-long-running-operation',
    args: { duration: 2, steps: 2 },
    dependsOn: ['first'],
  },
  { id: 'last', tool: 'everything.echo', args: { message: 'end' }, dependsOn: ['slow'] },
]);

async function attemptsOf(runId: string) {
  const store = new PgRunStore(db.db);
  return (await store.listStepAttempts(runId)).map((a) => [a.stepId, a.attempt, a.status]);
}

describe('restart mid-run (real entry point, PostgreSQL)', () => {
  it('resumes after a crash: finished steps are not run again, the idempotent step in flight is retried', async () => {
    llm = await startFakeLlm(byRole({ planner: [plan], synthesizer: ['All done after a restart.'] }));
    const a = startSteward(everything());
    await a.waitFor(/Steward: PostgreSQL server; \d+ tools from 1 MCP server/);
    a.type('echo, wait, echo');
    await a.waitFor(/▶ slow running/);
    await kill(a);

    const [run] = await db.db.selectFrom('runs').select(['id', 'status']).execute();
    expect(run!.status).toBe('running');
    expect(await attemptsOf(run!.id)).toEqual([
      ['first', 1, 'succeeded'],
      ['slow', 1, 'running'],
    ]);

    const b = startSteward(everything());
    await b.waitFor(/Steward restarted while slow was running; running it again/);
    await b.waitFor(/=== Report \(completed\) ===\nAll done after a restart\./);
    // The card shown again is of a run that is running, not one that just started at once.
    expect(b.output()).toContain('Running. Type "pause" or "stop" while it runs.');
    expect(b.output()).not.toContain('started at once');
    const attempts = await attemptsOf(run!.id);
    expect(attempts).toEqual(
      expect.arrayContaining([
        ['first', 1, 'succeeded'],
        ['slow', 1, 'failed'],
        ['slow', 2, 'succeeded'],
        ['last', 1, 'succeeded'],
      ]),
    );
    expect(attempts).toHaveLength(4);
    b.type('quit');
    await new Promise((r) => b.child.once('exit', r));
    // The real entry point logs to DATA_DIR/steward.log: the key must not be there, nor in the terminal.
    const log = readFileSync(join(dir, 'data', 'steward.log'), 'utf8');
    expect(log).toContain('MCP server "everything" connected');
    expect(log + a.output() + b.output()).not.toContain('sk-restart-test');
  });

  it('asks before repeating a non-idempotent step that was in flight; resume runs it again', async () => {
    llm = await startFakeLlm(byRole({ planner: [plan], synthesizer: ['Done.'] }));
    const server = everything({ tools: { 'trigger-long-running-operation': { idempotent: false } } });
    const a = startSteward(server);
    a.type('echo, wait, echo');
    await a.waitFor(/▶ slow running/);
    await kill(a);

    const b = startSteward(server);
    await b.waitFor(/slow was running\. Its tool may have acted already/);
    expect(b.output()).toContain('This run is paused. Type "resume" or "stop".');
    const [run] = await db.db.selectFrom('runs').select(['id', 'status']).execute();
    expect(run!.status).toBe('paused');
    const recovered = async () =>
      (
        await db.db
          .selectFrom('run_events')
          .select('payload')
          .where('run_id', '=', run!.id)
          .where('type', '=', 'recovered')
          .execute()
      ).map((e) => e.payload);
    // The takeover is on record before the thread hears of it: a kill right after the notice loses none of it.
    expect(await recovered()).toHaveLength(1);

    // Killed again while it waits: nothing about the run changed, so the next process says nothing more about it.
    await kill(b);
    const c = startSteward(server);
    // A ceiling, not a wait: the third process starts, connects its MCP server and takes the run over, which took
    // over 20 s once on a machine loaded to 8 on 2 cores (what it printed is given if it never comes).
    await waitUntil('the second takeover to be recorded', async () => (await recovered()).length >= 2, {
      timeoutMs: 60_000,
      details: () => `output of the third process:\n${c.output()}`,
    });
    // Exactly two. Full CI runs twice timed out waiting for them with the third process's card shown: the second
    // process had been killed after its notice but before its takeover was stored, which came last (it comes first
    // now, as the check after the notice above shows).
    expect(await recovered()).toHaveLength(2);
    await c.waitFor(/This run is paused\. Type "resume" or "stop"\./);
    expect(c.output()).not.toMatch(/Steward restarted while/);
    c.type('resume');
    await c.waitFor(/=== Report \(completed\) ===/);
    expect(await attemptsOf(run!.id)).toHaveLength(4);
    // A ceiling for the whole test, above the sum of its waits' own: three starts of the real entry point and two
    // takeovers took over 60 s once in a full CI run (December 2026; 8 s alone, 9 s beside two CPU hogs), and the
    // suite's 60 s then cut it off before any wait could say which stage was slow.
  }, 180_000);

  it('a kill after the run completed but before its report was written: the next start writes and sends it once', async () => {
    const one = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'once' } }]);
    // The first process's report writer never answers, so the kill lands after the run is stored as completed.
    const synthesizer = [{ hang: true as const }, 'The report, written after the restart.'];
    llm = await startFakeLlm(byRole({ planner: [one], synthesizer }));
    const a = startSteward(everything());
    await a.waitFor(/Steward: PostgreSQL server/);
    a.type('echo once');
    const run = await waitUntil('the run stored as completed while its report is being written', async () => {
      const row = await db.db.selectFrom('runs').select(['id', 'status', 'report', 'report_due']).executeTakeFirst();
      const writing = llm.requests.some((r) => r.role === 'synthesizer');
      return row?.status === 'completed' && writing ? row : undefined;
    });
    await kill(a);
    expect(run).toMatchObject({ report: null, report_due: true });

    const b = startSteward(everything());
    await b.waitFor(/=== Report \(completed\) ===\nThe report, written after the restart\./);
    const reported = await waitUntil('the report stored and its sending recorded', async () => {
      const row = await db.db
        .selectFrom('runs')
        .select(['report', 'report_due'])
        .where('id', '=', run.id)
        .executeTakeFirstOrThrow();
      return row.report_due ? undefined : row;
    });
    expect(reported.report).toBe('The report, written after the restart.');
    const events = await new PgRunStore(db.db).listEvents(run.id);
    expect(events.filter((e) => e.type === 'reported')).toHaveLength(1);
    expect(b.output().match(/=== Report/g)).toHaveLength(1);
    expect(await attemptsOf(run.id)).toEqual([['say', 1, 'succeeded']]);
    b.type('quit');
    await new Promise((r) => b.child.once('exit', r));
  });

  it('a bad configuration stops start-up with one clear message', async () => {
    llm = await startFakeLlm();
    writeFileSync(join(dir, 'mcp.json'), '{"mcpServers": {"x": {"command": 5}}}');
    // Through tsx, as `npm start` runs it.
    const child = spawn(process.execPath, entryPointArgs({ tsx: true }), {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        MCP_CONFIG: join(dir, 'mcp.json'),
        OPENAI_API_KEY: 'sk-secret-canary',
        DATA_DIR: join(dir, 'd'),
        DATABASE_URL: 'postgres://u:pw-canary@127.0.0.1:1/x',
      },
    });
    children.push(child);
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(err.trim()).toBe(`${join(dir, 'mcp.json')}: mcpServers.x.command: expected string, received number`);
    expect(err).not.toContain('pw-canary');
    expect(err).not.toContain('sk-secret-canary');
  });

  it("a bad setting stops start-up with one sentence in Steward's words: the variable, the problem, a good value", async () => {
    const child = spawn(process.execPath, entryPointArgs(), {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        OPENAI_API_KEY: 'sk-secret-canary',
        DATA_DIR: join(dir, 'd'),
        DATABASE_URL: 'postgres://u:pw-canary@127.0.0.1:1/x',
        STEWARD_MAX_PARALLEL: 'lots',
      },
    });
    children.push(child);
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(err.trim()).toBe(
      'Configuration error: STEWARD_MAX_PARALLEL is "lots", which is not a number: it must be a whole number of 1 or more, e.g. STEWARD_MAX_PARALLEL=16.',
    );
    expect(err).not.toContain('pw-canary');
    expect(err).not.toContain('sk-secret-canary');
  });
});

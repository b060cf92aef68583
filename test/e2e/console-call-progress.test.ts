/**
 * Progress moves the card (issue 29), in the console through the real entry point's parts: server-everything's
 * long-running operation reports `notifications/progress` each second, and the running step's line shows how far it
 * is while it runs. After a Stop the server goes on reporting (counted on a tap on its stdio pipes), and nothing of it
 * is shown or logged.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_SCRIPT, everythingStdioConfig, serverConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, planReply, startHarness, waitForStoredEnd, type Harness } from './harness.ts';

const TAP = join(import.meta.dirname, '../fixtures/stdio-tap.mjs');
let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('console, a call that reports progress (postgres)', () => {
  it('the running step shows the server’s progress while it runs; after Stop, its reports are dropped quietly', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-progress-tap-'));
    const wire = join(dir, 'wire.jsonl');
    const progressSent = () =>
      readFileSync(wire, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"notifications/progress"') && l.startsWith('{"dir":"out"')).length;
    h = await startHarness({
      db: 'postgres',
      servers: [
        serverConfig('everything', { command: process.execPath, args: [TAP, wire, EVERYTHING_SCRIPT, 'stdio'] }),
      ],
      script: byRole({
        planner: [
          planReply([
            { id: 'wait', tool: 'everything.trigger-long-running-operation', args: { duration: 60, steps: 60 } },
          ]),
        ],
        synthesizer: ['Stopped while waiting.'],
      }),
    });
    await h.type('wait a minute');
    const shown = await h.waitFor(
      /▶ wait running — calling everything\.trigger-long-running-operation: 2 \/ 60 \[0\/1\]/,
      20_000,
    );
    expect(shown).toBeTruthy();
    // Shown while the step runs: its attempt is still running, and the run with it.
    const run = await onlyRun(h);
    expect(run.status).toBe('running');
    expect((await h.store.listStepAttempts(run.id)).map((a) => a.status)).toEqual(['running']);

    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    const printedAtStop = h.output().length;
    const sentAtStop = progressSent();
    // server-everything keeps its loop going after the cancel: two more reports reach Steward.
    await waitUntil('the server to report twice more after the Stop', () => progressSent() >= sentAtStop + 2);
    const after = h.output().slice(printedAtStop);
    expect(after).not.toMatch(/running — calling/);
    expect(h.logs.filter((l) => /progress/i.test(l))).toEqual([]);
  });

  it('200 reports in 2 s print about one line a second, each further on than the last', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [
          planReply([
            { id: 'busy', tool: 'everything.trigger-long-running-operation', args: { duration: 2, steps: 200 } },
          ]),
        ],
        synthesizer: ['Done.'],
      }),
    });
    await h.type('keep busy for two seconds');
    await h.waitFor(/=== Report \(completed\) ===/);
    const run = await onlyRun(h);
    const end = await waitForStoredEnd(h.store, run.id, 'busy');
    const amounts = [...h.output().matchAll(/▶ busy running — calling [^\n]*: (\d+) \/ 200 /g)].map((m) =>
      Number(m[1]),
    );
    expect(amounts.length).toBeGreaterThanOrEqual(2);
    expect([...amounts].sort((a, b) => a - b)).toEqual(amounts);
    expect(new Set(amounts).size).toBe(amounts.length);
    // The first report at once, then at most one a second: not a line per report.
    const callSeconds = (end.endedAt!.getTime() - end.startedAt.getTime()) / 1000;
    expect(amounts.length).toBeLessThanOrEqual(Math.ceil(callSeconds) + 1);
  });
});

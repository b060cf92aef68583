/**
 * `npm run chaos` (issue 10): several Steward processes on one private PostgreSQL cluster, under SIGKILLs, database
 * restarts and Stop presses; prints the counts and the invariants, and exits 1 when one fails.
 *
 *   npx tsx test/chaos/chaos.ts [--runs 100] [--processes 3] [--seconds 120] [--seed 1 | --seeds 1-20]
 *       [--kill-every 4] [--pg-restart-every 15] [--stop-every 4] [--settle 90] [--root <checkout>] [--keep <dir>]
 *
 * `--seeds A-B` runs every seed from A to B in turn, one line per seed as it ends, and the whole tally of each seed
 * that failed at the end; it exits 1 when any seed failed (a failing seed is a bug, never a retry).
 * `--root` runs another checkout's `src/main.ts` (e.g. `git archive` of an older commit, with a node_modules link);
 * `--keep` writes each process's output and log, the audit log and the Slack calls to that folder.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { privatePostgresMissing } from '../helpers/private-postgres.ts';
import { runChaos, DEFAULT_CHAOS_OPTIONS as D } from './chaos-run.ts';
import { chaosPassed, formatTally } from './chaos-tally.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: String(D.runs) },
    processes: { type: 'string', default: String(D.processes) },
    seconds: { type: 'string', default: String(D.seconds) },
    seed: { type: 'string', default: String(D.seed) },
    seeds: { type: 'string' },
    'kill-every': { type: 'string', default: String(D.killEverySeconds) },
    'pg-restart-every': { type: 'string', default: String(D.pgRestartEverySeconds) },
    'stop-every': { type: 'string', default: String(D.stopEverySeconds) },
    settle: { type: 'string', default: String(D.settleSeconds) },
    root: { type: 'string' },
    keep: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});

const number = (name: keyof typeof values) => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number, not ${String(values[name])}`);
  return n;
};

if (privatePostgresMissing) {
  process.stderr.write(`chaos: cannot start a private PostgreSQL cluster: ${privatePostgresMissing}\n`);
  process.exit(2);
}

/** The seeds to run: `--seeds A-B` (or one number), else `--seed`. */
function seedsToRun(): number[] {
  if (values.seeds === undefined) return [number('seed')];
  const m = /^(\d+)(?:-(\d+))?$/.exec(values.seeds);
  const [from, to] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
  if (!(from <= to)) throw new Error(`--seeds must be a seed or a range A-B with A <= B, not ${values.seeds}`);
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

const seeds = seedsToRun();
const options = {
  runs: number('runs'),
  processes: number('processes'),
  seconds: number('seconds'),
  killEverySeconds: number('kill-every'),
  pgRestartEverySeconds: number('pg-restart-every'),
  stopEverySeconds: number('stop-every'),
  settleSeconds: number('settle'),
  root: values.root,
  log: values.quiet || seeds.length > 1 ? undefined : (line: string) => process.stdout.write(`${line}\n`),
};

/** One seed's run: its whole report, and its line for a range. */
async function runSeed(seed: number): Promise<{ passed: boolean; report: string; line: string }> {
  const started = Date.now();
  const keep = values.keep && (seeds.length > 1 ? join(values.keep, `seed-${seed}`) : values.keep);
  const result = await runChaos({ ...options, seed, artifactsDir: keep });
  const e = result.events;
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const settled = e.settledAfterMs === null ? `not within ${options.settleSeconds} s` : `${e.settledAfterMs} ms`;
  const report = [
    `Chaos: ${options.runs} requests, ${options.processes} processes, ${options.seconds} s of faults, seed ${seed}` +
      ` (${seconds} s in all)`,
    `Faults: ${e.kills} SIGKILLs, ${e.pgRestarts} PostgreSQL restarts, ${e.startFailures} failed starts; ` +
      `${e.approvesPressed} Approves pressed; ${e.stopsWithoutButton} Stop chances with no Stop button shown; settled: ${settled}`,
    '',
    formatTally(result.tally),
  ].join('\n');
  const passed = chaosPassed(result.tally);
  const count = (name: string) => result.tally.counts.find(([k]) => k.trim() === name)?.[1] ?? '?';
  const failed = result.tally.checks.filter((c) => c.failures > 0).map((c) => `${c.name} (${c.failures})`);
  const line =
    `seed ${String(seed).padStart(3)}  ${passed ? 'PASS' : 'FAIL'}  ${count('runs')} runs: ${count('completed')} completed, ` +
    `${count('stopped')} stopped, ${count('waiting on a person (paused / awaiting review)')} waiting, ` +
    `${count('failed')} failed; ${e.kills} kills, ${e.pgRestarts} PostgreSQL restarts; ` +
    `${count('"Steward restarted…" notices posted in Slack')} restart notices; ${seconds} s` +
    (failed.length > 0 ? `\n           failed: ${failed.join('; ')}` : '');
  return { passed, report, line };
}

const failedReports: string[] = [];
for (const seed of seeds) {
  const { passed, report, line } = await runSeed(seed);
  if (seeds.length === 1) process.stdout.write(`\n${report}\n\n`);
  else process.stdout.write(`${line}\n`);
  if (!passed) failedReports.push(report);
}
if (seeds.length > 1) {
  for (const report of failedReports) process.stdout.write(`\n${report}\n`);
  process.stdout.write(`\n${seeds.length - failedReports.length} of ${seeds.length} seeds passed.\n`);
}
process.exit(failedReports.length === 0 ? 0 : 1);

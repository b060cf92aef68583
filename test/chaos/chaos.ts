/**
 * `npm run chaos` (issue 10): several Steward processes on one private PostgreSQL cluster, under SIGKILLs, database
 * restarts and Stop presses; prints the counts and the invariants, and exits 1 when one fails.
 *
 *   npx tsx test/chaos/chaos.ts [--runs 100] [--processes 3] [--seconds 120] [--seed 1]
 *       [--kill-every 4] [--pg-restart-every 15] [--stop-every 4] [--settle 90] [--root <checkout>] [--keep <dir>]
 *
 * `--root` runs another checkout's `src/main.ts` (e.g. `git archive` of an older commit, with a node_modules link);
 * `--keep` writes each process's output and log, the audit log and the Slack calls to that folder.
 */
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

const options = {
  runs: number('runs'),
  processes: number('processes'),
  seconds: number('seconds'),
  seed: number('seed'),
  killEverySeconds: number('kill-every'),
  pgRestartEverySeconds: number('pg-restart-every'),
  stopEverySeconds: number('stop-every'),
  settleSeconds: number('settle'),
  root: values.root,
  artifactsDir: values.keep,
  log: values.quiet ? undefined : (line: string) => process.stdout.write(`${line}\n`),
};
const started = Date.now();
const result = await runChaos(options);
const e = result.events;
const settled = e.settledAfterMs === null ? `not within ${options.settleSeconds} s` : `${e.settledAfterMs} ms`;
process.stdout.write(
  [
    '',
    `Chaos: ${options.runs} requests, ${options.processes} processes, ${options.seconds} s of faults, seed ${options.seed}` +
      ` (${((Date.now() - started) / 1000).toFixed(0)} s in all)`,
    `Faults: ${e.kills} SIGKILLs, ${e.pgRestarts} PostgreSQL restarts, ${e.startFailures} failed starts; ` +
      `${e.approvesPressed} Approves pressed; ${e.stopsWithoutButton} Stop chances with no Stop button shown; settled: ${settled}`,
    '',
    formatTally(result.tally),
    '',
  ].join('\n'),
);
process.exit(chaosPassed(result.tally) ? 0 : 1);

/**
 * Steward's own time per plan-execute run, alone: every bench task through the real `Steward` on PostgreSQL (the
 * quick profile's latencies), a warm-up pass, then `BENCH_ROUNDS` rounds; prints the per-shape overhead table of
 * section 1. `npx tsx bench/own-time.ts` takes a minute or two, where `bench/run.ts` takes many.
 */
import { ModeRunner } from './mode-runner.ts';
import { readProfile } from './profile.ts';
import { runOverheadTable } from './report-react.ts';
import { analyseRun, type RunRow } from './run-analysis.ts';
import { openWorld } from './world.ts';

async function main(): Promise<void> {
  const profile = readProfile(process.argv.slice(2), process.env);
  const world = await openWorld({ scale: profile.scale, seed: profile.seed });
  const runner = new ModeRunner(world);
  const rows: RunRow[] = [];
  try {
    for (let round = 0; round <= profile.rounds; round++) {
      for (const task of world.tasks) {
        const run = await runner.run('plan-execute', task, round, `own:${task.id}:${round}`);
        const { calls } = await world.fake.flush();
        // Round 0 warms the pool, the servers and the JIT; it is not counted.
        if (round > 0) rows.push(analyseRun(task, 'plan-execute', round, run, calls));
      }
    }
  } finally {
    await runner.shutdown();
    await world.close();
  }
  const failed = rows.filter((r) => !r.correct);
  process.stdout.write(
    [
      `${rows.length} runs, ${profile.rounds} rounds, scale ${profile.scale}; ${failed.length} not correct`,
      ...runOverheadTable(rows),
      '',
    ].join('\n'),
  );
}

await main();

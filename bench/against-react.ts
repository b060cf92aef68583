/**
 * Benchmarks 1 and 2: every task in every mode, interleaved. Each round runs the tasks in a rotated order and each
 * task's modes in a rotated order, so no mode always goes first. A warm-up pass is not counted: tasks that touch
 * every server, open the pool's connections (fan-16) and run an llm step, in every mode.
 */
import { analyseRun, type RunRow } from './run-analysis.ts';
import { MODES, ModeRunner, type Mode } from './mode-runner.ts';
import type { BenchTask } from './tasks.ts';
import type { World } from './world.ts';

/** Rows of a 429 run carry this variant. */
export type RateLimitedRow = RunRow & { variant: 'rate-limited' };

const WARM_UP = ['single-echo', 'single-sum-http', 'single-sleep', 'fan16-sum', 'chain3-echo-http', 'large-checksum-1'];

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function runOne(
  runner: ModeRunner,
  world: World,
  task: BenchTask,
  mode: Mode,
  round: number,
  key: string,
): Promise<RunRow> {
  const run = await runner.run(mode, task, round, key);
  const { calls, failures } = await world.fake.flush();
  const row = analyseRun(task, mode, round, run, calls);
  if (failures.length > 0) row.status += `; fake LLM: ${failures.join('; ')}`;
  return row;
}

/** Runs `rounds` measured rounds after a warm-up; `onRow` sees every counted row as it is made. */
export async function benchAgainstReact(
  world: World,
  options: { rounds: number; onRow: (row: RunRow) => void; log: (line: string) => void },
): Promise<RunRow[]> {
  const runner = new ModeRunner(world);
  const rows: RunRow[] = [];
  try {
    await world.fake.flush();
    const t = performance.now();
    const warm = world.tasks.filter((task) => WARM_UP.includes(task.id));
    for (const task of warm)
      for (const mode of MODES) await runOne(runner, world, task, mode, 0, `warm:${task.id}:${mode}`);
    options.log(`warm-up: ${warm.length * MODES.length} runs in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    for (let round = 1; round <= options.rounds; round++) {
      const started = performance.now();
      const tasks = rotate(world.tasks, round * 7);
      for (const [i, task] of tasks.entries()) {
        for (const mode of rotate(MODES, i + round)) {
          const row = await runOne(runner, world, task, mode, round, `${task.id}:${mode}:${round}`);
          rows.push(row);
          options.onRow(row);
        }
      }
      options.log(
        `round ${round}/${options.rounds}: ${tasks.length * MODES.length} runs in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    }
    return rows;
  } finally {
    await runner.shutdown();
  }
}

/**
 * The same comparison with the fake refusing 1 request in `every` once with 429 and Retry-After: both sides go
 * through the same SDK retry, so the waits show up in wall time and refused calls are counted, not failed runs.
 */
export async function benchRateLimited(
  world: World,
  options: { taskIds: string[]; every: number; retryAfterMs: number; onRow: (row: RunRow) => void },
): Promise<RateLimitedRow[]> {
  await world.fake.configure({
    ...world.fakeConfig,
    rateLimit: { every: options.every, retryAfterMs: options.retryAfterMs },
  });
  const runner = new ModeRunner(world);
  const rows: RateLimitedRow[] = [];
  try {
    await world.fake.flush();
    for (const task of world.tasks.filter((t) => options.taskIds.includes(t.id))) {
      for (const mode of MODES) {
        const row: RateLimitedRow = {
          ...(await runOne(runner, world, task, mode, 1000, `429:${task.id}:${mode}`)),
          variant: 'rate-limited',
        };
        rows.push(row);
        options.onRow(row);
      }
    }
    return rows;
  } finally {
    await runner.shutdown();
    await world.fake.configure(world.fakeConfig);
  }
}

/** One run of every `every`-th task in `mode` (for the CPU profile); returns how many runs it made. */
export async function runPass(world: World, mode: Mode, round: number, every = 1): Promise<number> {
  const runner = new ModeRunner(world);
  const tasks = world.tasks.filter((_, i) => i % every === 0);
  try {
    for (const task of tasks) {
      await runner.run(mode, task, round, `pass:${task.id}:${mode}:${round}`);
      await world.fake.flush();
    }
    return tasks.length;
  } finally {
    await runner.shutdown();
  }
}

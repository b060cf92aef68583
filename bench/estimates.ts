/**
 * Section 10: how the plan card's estimates compare with what the runs took (issues 17 and 33). Every bench task runs
 * `rounds` times through the real `Steward` wired as the app wires it (history read from PostgreSQL); the first
 * round makes the history, each later round is a fresh process (a new `Steward`, so a cold cache) whose cards
 * estimate from it. Each round also runs two tasks whose arguments are new to it (`createFreshArgTasks`: a wait of a
 * length never asked for, and a chain of labelled pings with new labels). For each run: the estimate it started with
 * and how long it took, as the run's end reports them; and, side by side from one read of the history just before
 * the run, the estimate without the middle tier of issue 33 (same arguments, else the tool's) and with it (same
 * arguments, else arguments of the same shape, else the tool's).
 */
import type { EstimateBasis, EstimateHistoryData, PlanEstimate } from '../src/engine/estimate-history.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import { validatePlan } from '../src/engine/plan/validate-plan.ts';
import { estimatePlan } from '../src/engine/run/estimates.ts';
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier } from '../src/engine/ports.ts';
import { PgEstimateHistory } from '../src/store/estimate-history.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { taskPlan, taskTag } from './fake-model.ts';
import { BENCH_MAX_PARALLEL } from './mode-runner.ts';
import { BENCH_BUDGETS } from './profile.ts';
import { header, median, pct, quantile, row } from './stats.ts';
import { createFreshArgTasks, type BenchTask } from './tasks.ts';
import type { World } from './world.ts';

/** Which tasks a run belongs to: the bench's usual 25 (repeated each round), or one of the two with new arguments. */
export type EstimateGroup = 'repeated' | 'new wait length' | 'new ping labels';

/** A duration range, or null when no step had history. */
type Span = { low: number; high: number } | null;

/**
 * One run: its task, round, how long it took, and what its card estimated (null: no duration history yet); beside
 * it, from one history read before the run, the estimate without (`before`) and with (`after`) the middle tier, and
 * how many of its steps each history kind estimated with it.
 */
export interface EstimateRow {
  section: 'estimates';
  task: string;
  shape: string;
  group: EstimateGroup;
  round: number;
  tookMs: number;
  low: number | null;
  high: number | null;
  before: Span;
  after: Span;
  basis: Partial<Record<EstimateBasis, number>>;
}

const RUN_TIMEOUT_MS = 120_000;

/** Runs every task `rounds` times and returns the rows and the section's Markdown. */
export async function benchEstimates(
  world: World,
  o: { rounds: number; onRow: (r: EstimateRow) => void; log: (line: string) => void },
): Promise<{ rows: EstimateRow[]; markdown: string[] }> {
  const rows: EstimateRow[] = [];
  const history = new PgEstimateHistory(world.db.db);
  const fresh = createFreshArgTasks(world.fakeConfig.scale);
  for (let round = 0; round < o.rounds; round++) {
    o.log(`section 10: estimates, round ${round + 1} of ${o.rounds}`);
    const { steward, ends } = createSteward(world);
    const tasks = [...world.tasks, ...fresh.filter((t) => t.id.endsWith(`-r${round}`))];
    try {
      for (const task of tasks) {
        const key = `estimates:${task.id}:${round}`;
        const sideBySide = beforeAndAfter(task, world, await history.readEstimateHistory());
        const ended = ends(key);
        await steward.message({
          conversation: { channel: 'bench', key },
          actor: { id: 'bench', channel: 'bench' },
          text: `${taskTag(task.id, 5000 + round)} ${task.request}`,
        });
        const took = await ended;
        await steward.idle();
        await world.fake.flush();
        if (!took) continue;
        const range = took.estimate?.durationMs ?? null;
        const row: EstimateRow = {
          section: 'estimates',
          task: task.id,
          shape: task.shape,
          group: groupOf(task),
          round,
          tookMs: took.ms,
          low: range?.low ?? null,
          high: range?.high ?? null,
          ...sideBySide,
        };
        rows.push(row);
        o.onRow(row);
      }
    } finally {
      await steward.shutdown();
    }
  }
  return { rows, markdown: renderEstimates(rows) };
}

function groupOf(task: BenchTask): EstimateGroup {
  if (task.id.startsWith('fresh-wait-')) return 'new wait length';
  if (task.id.startsWith('fresh-pings-')) return 'new ping labels';
  return 'repeated';
}

/**
 * The task's plan estimated from the same history twice: without the middle tier (the history as the store read it
 * before issue 33: no per-shape groups) and with it, as the app's cards now do.
 */
function beforeAndAfter(
  task: BenchTask,
  world: World,
  history: EstimateHistoryData,
): Pick<EstimateRow, 'before' | 'after' | 'basis'> {
  const v = validatePlan(taskPlan(task), world.host.listTools());
  if (!v.ok) throw new Error(`${task.id}: the bench plan is invalid: ${v.error.join('; ')}`);
  const options = { maxParallel: BENCH_MAX_PARALLEL };
  const before = estimatePlan(v.value, { ...history, byShape: undefined }, [], options);
  const after = estimatePlan(v.value, history, [], options);
  const basis: Partial<Record<EstimateBasis, number>> = {};
  for (const b of after.basis ?? []) basis[b.from] = (basis[b.from] ?? 0) + 1;
  return { before: before.durationMs, after: after.durationMs, basis };
}

/** A Steward as the app wires it (estimates on), and a way to wait for a conversation's run to end. */
function createSteward(world: World) {
  const waiters = new Map<string, (took: { ms: number; estimate?: PlanEstimate } | null) => void>();
  const notifier: Notifier = {
    send: async (c, m: OutboundMessage) => {
      const done = waiters.get(c.key);
      if (!done) return;
      if (m.kind === 'runStatus' && m.took) done(m.took);
      else if (m.kind === 'report' || m.kind === 'answer' || (m.kind === 'notice' && m.level === 'error')) done(null);
    },
  };
  const steward = new Steward({
    llm: world.llm,
    tools: world.host,
    store: new PgRunStore(world.db.db),
    estimateHistory: new PgEstimateHistory(world.db.db),
    notifier,
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
    log: () => undefined,
    settings: {
      maxParallel: BENCH_MAX_PARALLEL,
      maxAttempts: 3,
      amendmentCap: 3,
      maxRepairs: 2,
      reviewTimeoutMs: 600_000,
      budgets: BENCH_BUDGETS,
    },
  });
  const ends = (key: string) =>
    new Promise<{ ms: number; estimate?: PlanEstimate } | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${key}: no end within ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS);
      waiters.set(key, (took) => {
        clearTimeout(timer);
        waiters.delete(key);
        resolve(took);
      });
    });
  return { steward, ends };
}

/**
 * The error of an estimate: 0 inside its range, else the distance to the nearer end, as a share of what the run took.
 * The p50 end alone is also reported, as the single number a person would read off the card.
 */
function rangeError(range: Span, tookMs: number): number {
  if (!range) return NaN;
  const off = tookMs < range.low ? range.low - tookMs : tookMs > range.high ? tookMs - range.high : 0;
  return off / Math.max(1, tookMs);
}

function p50Error(range: Span, tookMs: number): number {
  return range ? Math.abs(tookMs - range.low) / Math.max(1, tookMs) : NaN;
}

const card = (r: EstimateRow): Span => (r.low === null || r.high === null ? null : { low: r.low, high: r.high });

function renderEstimates(rows: readonly EstimateRow[]): string[] {
  const estimated = rows.filter((r) => r.round > 0 && r.low !== null);
  const lines = ['## 10. Estimates against actual durations', ''];
  if (estimated.length === 0) return [...lines, 'No run after the first round had an estimate.', ''];
  const inside = estimated.filter((r) => rangeError(card(r), r.tookMs) === 0).length;
  const p50Errors = estimated.map((r) => p50Error(card(r), r.tookMs));
  lines.push(
    `${estimated.length} runs after the first round (${new Set(estimated.map((r) => r.task)).size} tasks) carried a duration estimate.`,
    '',
    `- Took a time inside the card's range (steps scheduled within maxParallel over p50 .. p90): ${inside} of ${estimated.length} (${pct(inside / estimated.length)}).`,
    `- Median absolute error of the p50 end: ${pct(median(p50Errors))}; of the range (0 inside it): ${pct(median(estimated.map((r) => rangeError(card(r), r.tookMs))))}.`,
    `- Median run: took ${Math.round(median(estimated.map((r) => r.tookMs)))} ms; estimated ${Math.round(median(estimated.map((r) => r.low ?? 0)))}–${Math.round(median(estimated.map((r) => r.high ?? 0)))} ms.`,
    '',
    ...sideBySideLines(rows.filter((r) => r.round > 0 && r.before && r.after)),
    'A run is timed from its start (its auto-approval, or its first step that started while the plan streamed) to',
    "its end, as its card reports it. A step's history is its tool's with the same arguments once 3 recent calls had",
    'them, else with arguments of the same shape (top-level names and value types) once 3 had that shape and the tool',
    "was called with more than one, else the tool's. What the estimate does not count: steps that start while the plan",
    'streams start as they arrive, so a wide fan-out ends later than its steps alone take.',
    '',
  );
  return lines;
}

/** Before and after the middle tier, from the same history read, per group of tasks and over all. */
function sideBySideLines(rows: readonly EstimateRow[]): string[] {
  if (rows.length === 0) return [];
  const groups: [string, readonly EstimateRow[]][] = [
    ['all', rows],
    ...(['repeated', 'new wait length', 'new ping labels'] as const).map((g): [string, EstimateRow[]] => [
      g,
      rows.filter((r) => r.group === g),
    ]),
  ];
  const cells = (xs: number[]) => `${pct(median(xs))} / ${pct(quantile(xs, 0.9))}`;
  const lines = [
    'Side by side, from one read of the history just before each run (rounds after the first; every run here ran',
    "undisturbed): the estimate without the middle tier (same arguments, else the tool's) and with it. Errors as",
    'median / p90.',
    '',
    ...header([
      'Runs',
      'n',
      'range error before',
      'range error after',
      'p50-end error before',
      'p50-end error after',
      'steps by history (same / similar / tool)',
    ]),
  ];
  for (const [name, group] of groups) {
    if (group.length === 0) continue;
    const count = (b: EstimateBasis) => group.reduce((n, r) => n + (r.basis[b] ?? 0), 0);
    lines.push(
      row([
        name,
        group.length,
        cells(group.map((r) => rangeError(r.before, r.tookMs))),
        cells(group.map((r) => rangeError(r.after, r.tookMs))),
        cells(group.map((r) => p50Error(r.before, r.tookMs))),
        cells(group.map((r) => p50Error(r.after, r.tookMs))),
        `${count('args')} / ${count('similar')} / ${count('tool')}`,
      ]),
    );
  }
  lines.push('');
  return lines;
}

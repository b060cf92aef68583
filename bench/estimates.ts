/**
 * Section 10: how the plan card's estimates compare with what the runs took (issue 17). Every bench task runs
 * `rounds` times through the real `Steward` wired as the app wires it (history read from PostgreSQL); the first
 * round makes the history, each later round is a fresh process (a new `Steward`, so a cold cache) whose cards
 * estimate from it. For each run: the estimate it started with and how long it took, as the run's end reports them.
 */
import type { PlanEstimate } from '../src/engine/estimate-history.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier } from '../src/engine/ports.ts';
import { PgEstimateHistory } from '../src/store/estimate-history.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { taskTag } from './fake-model.ts';
import { BENCH_MAX_PARALLEL } from './mode-runner.ts';
import { BENCH_BUDGETS } from './profile.ts';
import { median, pct } from './stats.ts';
import type { World } from './world.ts';

/** One run: its task, round, how long it took, and what was estimated (null: no duration history yet). */
export interface EstimateRow {
  section: 'estimates';
  task: string;
  shape: string;
  round: number;
  tookMs: number;
  low: number | null;
  high: number | null;
}

const RUN_TIMEOUT_MS = 120_000;

/** Runs every task `rounds` times and returns the rows and the section's Markdown. */
export async function benchEstimates(
  world: World,
  o: { rounds: number; onRow: (r: EstimateRow) => void; log: (line: string) => void },
): Promise<{ rows: EstimateRow[]; markdown: string[] }> {
  const rows: EstimateRow[] = [];
  for (let round = 0; round < o.rounds; round++) {
    o.log(`section 10: estimates, round ${round + 1} of ${o.rounds}`);
    const { steward, ends } = createSteward(world);
    try {
      for (const task of world.tasks) {
        const key = `estimates:${task.id}:${round}`;
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
          round,
          tookMs: took.ms,
          low: range?.low ?? null,
          high: range?.high ?? null,
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
function rangeError(r: EstimateRow): number {
  if (r.low === null || r.high === null) return NaN;
  const off = r.tookMs < r.low ? r.low - r.tookMs : r.tookMs > r.high ? r.tookMs - r.high : 0;
  return off / Math.max(1, r.tookMs);
}

function renderEstimates(rows: readonly EstimateRow[]): string[] {
  const estimated = rows.filter((r) => r.round > 0 && r.low !== null);
  const lines = ['## 10. Estimates against actual durations', ''];
  if (estimated.length === 0) return [...lines, 'No run after the first round had an estimate.', ''];
  const inside = estimated.filter((r) => rangeError(r) === 0).length;
  const p50Errors = estimated.map((r) => Math.abs(r.tookMs - (r.low ?? 0)) / Math.max(1, r.tookMs));
  lines.push(
    `${estimated.length} runs after the first round (${new Set(estimated.map((r) => r.task)).size} tasks) carried a duration estimate.`,
    '',
    `- Took a time inside the card's range (steps scheduled within maxParallel over p50 .. p90): ${inside} of ${estimated.length} (${pct(inside / estimated.length)}).`,
    `- Median absolute error of the p50 end: ${pct(median(p50Errors))}; of the range (0 inside it): ${pct(median(estimated.map(rangeError)))}.`,
    `- Median run: took ${Math.round(median(estimated.map((r) => r.tookMs)))} ms; estimated ${Math.round(median(estimated.map((r) => r.low ?? 0)))}–${Math.round(median(estimated.map((r) => r.high ?? 0)))} ms.`,
    '',
    'A run is timed from its start (its auto-approval, or its first step that started while the plan streamed) to',
    "its end, as its card reports it. A step's history is its tool's with the same arguments once 3 recent calls had",
    "them (else the tool's), so ranges of repeated calls are narrow. What the estimate does not count: steps that",
    'start while the plan streams start as they arrive, so a wide fan-out ends later than its steps alone take.',
    '',
  );
  return lines;
}

/**
 * Tables of benchmarks 1 and 2 and of Steward's per-run overhead, from the run rows. Ratios are taken per pair
 * (same task, same round) and summarized as median (p25–p75) over the pairs of a shape.
 */
import { MODES, type Mode } from './mode-runner.ts';
import type { RowMode, RunRow } from './run-analysis.ts';
import { groupBy, header, int, median, pct, row, spread, sum } from './stats.ts';
import { SHAPES } from './tasks.ts';

const SHORT: Record<Mode, string> = {
  'plan-execute': 'plan-execute',
  'plan-execute-seq': 'plan-execute, maxParallel 1',
  react: 'ReAct',
};

/** Rows of one mode, keyed by task and round. */
function byPair(rows: readonly RunRow[], mode: RowMode): Map<string, RunRow> {
  return new Map(rows.filter((r) => r.mode === mode).map((r) => [`${r.task}#${r.round}`, r]));
}

/** Pairs `a` with `b` (same task and round) and applies `f` to each pair. */
export function paired(rows: readonly RunRow[], a: RowMode, b: RowMode, f: (x: RunRow, y: RunRow) => number): number[] {
  const right = byPair(rows, b);
  return [...byPair(rows, a)].flatMap(([k, x]) => {
    const y = right.get(k);
    return y ? [f(x, y)] : [];
  });
}

function shapesIn(rows: readonly RunRow[]): string[] {
  return SHAPES.filter((s) => rows.some((r) => r.shape === s));
}

/** The range of step counts in `rows` of `mode` (ReAct counts tool calls; plan-execute also counts llm steps). */
function stepsOf(rows: readonly RunRow[], mode: Mode = 'react'): string {
  const ns = [...new Set(rows.filter((r) => r.mode === mode).map((r) => r.steps))].sort((a, b) => a - b);
  return ns.length > 1 ? `${ns[0]}–${ns.at(-1)}` : String(ns[0] ?? '?');
}

/** Benchmark 1, part a: every mode per shape, absolute figures. */
export function modesTable(rows: readonly RunRow[]): string[] {
  const out = [
    ...header(
      ['shape', 'N', 'mode', 'LLM calls', 'tokens in / out', 'wall ms', 'analytic ms', 'wall ÷ analytic', 'correct'],
      3,
    ),
  ];
  for (const shape of shapesIn(rows)) {
    const of = rows.filter((r) => r.shape === shape);
    for (const mode of MODES) {
      const rs = of.filter((r) => r.mode === mode);
      if (rs.length === 0) continue;
      out.push(
        row([
          shape,
          stepsOf(of),
          SHORT[mode],
          median(rs.map((r) => r.llmCalls)).toFixed(0),
          `${int(median(rs.map((r) => r.inputTokens)))} / ${int(median(rs.map((r) => r.outputTokens)))}`,
          spread(
            rs.map((r) => r.wallMs),
            0,
          ),
          int(median(rs.map((r) => r.analyticMs))),
          spread(
            rs.map((r) => r.wallMs / r.analyticMs),
            2,
          ),
          `${rs.filter((r) => r.correct).length}/${rs.length}`,
        ]),
      );
    }
  }
  return out;
}

/** Benchmark 1, part b: ReAct against plan-execute, measured beside the analytic limit. */
export function againstReactTable(rows: readonly RunRow[]): string[] {
  const out = [...header(['shape', 'N', 'ReAct ÷ PE wall', 'limit', 'achieved', 'tokens ReAct ÷ PE'], 2)];
  const tokens = (r: RunRow) => r.inputTokens + r.outputTokens;
  for (const shape of [...shapesIn(rows), 'all']) {
    const of = shape === 'all' ? rows : rows.filter((r) => r.shape === shape);
    const cells = (m: Mode) => {
      const ratio = paired(of, m, 'plan-execute', (x, y) => x.wallMs / y.wallMs);
      const limit = paired(of, m, 'plan-execute', (x, y) => x.analyticMs / y.analyticMs);
      const achieved = paired(of, m, 'plan-execute', (x, y) => x.wallMs / y.wallMs / (x.analyticMs / y.analyticMs));
      return [
        spread(ratio),
        median(limit).toFixed(2),
        spread(
          achieved.map((a) => a * 100),
          0,
          '%',
        ),
      ];
    };
    out.push(
      row([
        shape === 'all' ? '**all**' : shape,
        shape === 'all' ? '' : stepsOf(of),
        ...cells('react'),
        spread(
          paired(of, 'react', 'plan-execute', (x, y) => tokens(x) / tokens(y)),
          1,
        ),
      ]),
    );
  }
  return out;
}

/** Benchmark 2: plan-execute with maxParallel 1 against parallel, on tasks whose tools take time. */
export function parallelTable(rows: readonly RunRow[]): string[] {
  const timed = rows.filter((r) => r.sumT > 0);
  const out = [
    ...header(
      [
        'shape',
        'tasks',
        'limit ΣT ÷ CP',
        'tool phase: seq ÷ par',
        'achieved',
        'end to end: seq ÷ par',
        'limit',
        'achieved',
      ],
      2,
    ),
  ];
  for (const shape of [...shapesIn(timed), 'all']) {
    const of = shape === 'all' ? timed : timed.filter((r) => r.shape === shape);
    const limit = (x: RunRow) => x.sumT / Math.max(1e-9, x.criticalT);
    const phase = paired(
      of,
      'plan-execute-seq',
      'plan-execute',
      (x, y) => (x.toolPhaseMs ?? NaN) / (y.toolPhaseMs ?? NaN),
    );
    const phaseAchieved = paired(
      of,
      'plan-execute-seq',
      'plan-execute',
      (x, y) => (x.toolPhaseMs ?? NaN) / (y.toolPhaseMs ?? NaN) / limit(y),
    );
    const e2e = paired(of, 'plan-execute-seq', 'plan-execute', (x, y) => x.wallMs / y.wallMs);
    const e2eLimit = paired(of, 'plan-execute-seq', 'plan-execute', (x, y) => x.analyticMs / y.analyticMs);
    const e2eAchieved = paired(
      of,
      'plan-execute-seq',
      'plan-execute',
      (x, y) => x.wallMs / y.wallMs / (x.analyticMs / y.analyticMs),
    );
    const tasks = new Set(of.map((r) => r.task)).size;
    out.push(
      row([
        shape === 'all' ? '**all**' : shape,
        tasks,
        median(of.filter((r) => r.mode === 'plan-execute').map(limit)).toFixed(2),
        spread(phase),
        spread(
          phaseAchieved.map((a) => a * 100),
          0,
          '%',
        ),
        spread(e2e),
        median(e2eLimit).toFixed(2),
        spread(
          e2eAchieved.map((a) => a * 100),
          0,
          '%',
        ),
      ]),
    );
  }
  return out;
}

/** Where a plan-execute run spends time besides the LLM and the tools, per shape (ms, medians). */
export function runOverheadTable(rows: readonly RunRow[]): string[] {
  const pe = rows.filter((r) => r.mode === 'plan-execute' && r.overhead);
  const out = [
    ...header(
      [
        'shape',
        'steps',
        'message → planner',
        'planner → 1st step',
        'between steps',
        'last step → report writer',
        'report → sent',
        'total ms / run',
        'store calls',
        'store ms not hidden',
      ],
      1,
    ),
  ];
  const line = (label: string, rs: RunRow[]) => {
    const o = (k: keyof NonNullable<RunRow['overhead']>) => rs.map((r) => r.overhead?.[k] ?? NaN);
    out.push(
      row([
        label,
        stepsOf(rs, 'plan-execute'),
        median(o('prePlan')).toFixed(1),
        median(o('approve')).toFixed(1),
        median(o('steps')).toFixed(1),
        median(o('finish')).toFixed(1),
        median(o('report')).toFixed(1),
        spread(o('total'), 1),
        median(o('storeCalls')).toFixed(0),
        median(o('storeExposedMs')).toFixed(1),
      ]),
    );
  };
  for (const [shape, rs] of groupBy(pe, (r) => r.shape)) line(shape, rs);
  line('**all**', pe);
  return out;
}

/** The same comparison under 429s: refused calls, wall time and correctness per mode. */
export function rateLimitTable(rows: readonly RunRow[], every: number, retryAfterMs: number): string[] {
  const out = [
    `The fake refused the 1st and every ${every}th further distinct request of each run once with 429 and Retry-After ${retryAfterMs} ms; the openai SDK (maxRetries 2, Steward's default) waited and sent again. ${new Set(rows.map((r) => r.task)).size} tasks, one run each.`,
    '',
    ...header(['mode', 'runs', 'LLM calls answered', 'refused (429)', 'wall ms (median)', 'correct'], 1),
  ];
  for (const mode of MODES) {
    const rs = rows.filter((r) => r.mode === mode);
    if (rs.length === 0) continue;
    out.push(
      row([
        SHORT[mode],
        rs.length,
        sum(rs.map((r) => r.llmCalls)),
        sum(rs.map((r) => r.refused)),
        int(median(rs.map((r) => r.wallMs))),
        `${rs.filter((r) => r.correct).length}/${rs.length}`,
      ]),
    );
  }
  return out;
}

/** Median of achieved shares per shape, for the targets summary. */
export function achievedByShape(rows: readonly RunRow[], versus: 'react' | 'parallel'): Map<string, number> {
  const out = new Map<string, number>();
  // Against sequential, only shapes with something to overlap count: elsewhere the limit is 1 and the ratio is noise.
  const of = versus === 'parallel' ? rows.filter((r) => r.sumT > 1.05 * r.criticalT) : rows;
  for (const shape of shapesIn(of)) {
    const rs = of.filter((r) => r.shape === shape);
    const xs =
      versus === 'react'
        ? paired(rs, 'react', 'plan-execute', (x, y) => x.wallMs / y.wallMs / (x.analyticMs / y.analyticMs))
        : paired(
            rs,
            'plan-execute-seq',
            'plan-execute',
            (x, y) => (x.toolPhaseMs ?? NaN) / (y.toolPhaseMs ?? NaN) / (y.sumT / y.criticalT),
          );
    out.set(shape, median(xs));
  }
  return out;
}

export { pct };

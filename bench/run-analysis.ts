/**
 * Turns one observed run into a row: LLM calls and server-counted tokens, correctness, the analytic wall time for
 * its mode (from the latencies the fake applied and the tasks' modelled tool times), and for plan-execute where the
 * time went besides the LLM and the tools.
 */
import type { LlmCallRecord } from './fake-llm-handle.ts';
import type { Mode, ModeRun } from './mode-runner.ts';
import { sum } from './stats.ts';
import type { BenchTask, Shape, TaskStep } from './tasks.ts';
import { exclusiveMs, intervals, type Span } from './timeline.ts';

/** Steward's own time in a plan-execute run, in ms, by phase (LLM and tool time taken out). */
export interface OverheadBreakdown {
  /** Message in → planner call sent. */
  prePlan: number;
  /** Planner answer → first step sent. */
  approve: number;
  /** First step sent → last step done, less the tools' own time on the critical path (or their sum when sequential). */
  steps: number;
  /** Last step done → report writer called. */
  finish: number;
  /** Report written → report sent. */
  report: number;
  total: number;
  storeCalls: number;
  storeMs: number;
  /** Store time not hidden behind an LLM or tool call. */
  storeExposedMs: number;
}

/** Modes of rows: the four of the ReAct comparison and the LangGraph peer. */
export type RowMode = Mode | 'langgraph';

/** One run of one task in one mode. */
export interface RunRow {
  /** `peer`: the comparison against LangGraph, with issue 13's latency model. */
  section: 'react' | 'peer';
  task: string;
  shape: Shape;
  transport: BenchTask['transport'];
  mode: RowMode;
  round: number;
  steps: number;
  wallMs: number;
  correct: boolean;
  status: string;
  llmCalls: number;
  refused: number;
  inputTokens: number;
  outputTokens: number;
  /** Σ of the latencies the fake applied to this run's calls (llm steps are counted as steps, not here). */
  modelLlmMs: number;
  /** The fake's records summed per role. */
  roles: Record<string, { calls: number; modelMs: number; inputTokens: number; outputTokens: number }>;
  /** The analytic wall time: modelled LLM latencies plus modelled tool time, critical path or sum by mode. */
  analyticMs: number;
  /** Σ T and critical path of T, modelled (llm steps count with their modelled latency). */
  sumT: number;
  criticalT: number;
  /** Planner answer → report writer called (plan-execute only). */
  toolPhaseMs?: number;
  overhead?: OverheadBreakdown;
}

/**
 * Builds the row; `calls` are the fake's records for this run. Options: every tool call took at least
 * `toolFloorMs`; plan-execute ran at most `maxParallel` steps at once (unlimited by default).
 */
export function analyseRun(
  task: BenchTask,
  mode: RowMode,
  round: number,
  run: ModeRun,
  calls: readonly LlmCallRecord[],
  options: { toolFloorMs?: number; maxParallel?: number } = {},
): RunRow {
  const toolFloorMs = options.toolFloorMs ?? 0;
  const answered = calls.filter((c) => c.status === 200);
  const llmStepLatency = answered.filter((c) => c.role === 'llm_step').map((c) => c.latencyMs);
  const plan = mode === 'plan-execute' || mode === 'plan-execute-seq';
  const steps = plan ? task.steps : task.steps.filter((s) => s.kind === 'tool');
  const modelled = weights(steps, (s, i) =>
    s.kind === 'llm' ? (llmStepLatency[i] ?? 0) : Math.max(s.nominalMs, toolFloorMs),
  );
  const sumT = sum([...modelled.values()]);
  const criticalT = criticalPath(steps, modelled);
  const modelLlmMs = sum(answered.filter((c) => c.role !== 'llm_step').map((c) => c.latencyMs));
  const roles: RunRow['roles'] = {};
  for (const c of answered) {
    const r = (roles[c.role] ??= { calls: 0, modelMs: 0, inputTokens: 0, outputTokens: 0 });
    r.calls++;
    r.modelMs += c.latencyMs;
    r.inputTokens += c.inputTokens;
    r.outputTokens += c.outputTokens;
  }
  const row: RunRow = {
    section: 'react',
    task: task.id,
    shape: task.shape,
    transport: task.transport,
    mode,
    round,
    steps: steps.length,
    wallMs: run.wallMs,
    correct: run.answer !== null && run.answer.includes(task.expected),
    status: run.status,
    llmCalls: answered.length,
    refused: calls.length - answered.length,
    inputTokens: sum(answered.map((c) => c.inputTokens)),
    outputTokens: sum(answered.map((c) => c.outputTokens)),
    modelLlmMs,
    roles,
    sumT,
    criticalT,
    analyticMs: modelLlmMs + analyticTools(mode, steps, modelled, run, options.maxParallel),
  };
  if (plan) Object.assign(row, planBreakdown(task, mode, run));
  return row;
}

function analyticTools(
  mode: RowMode,
  steps: readonly TaskStep[],
  t: Map<string, number>,
  run: ModeRun,
  maxParallel?: number,
): number {
  if (mode === 'plan-execute') return maxParallel ? scheduledSpan(steps, t, maxParallel) : criticalPath(steps, t);
  if (mode === 'langgraph')
    return sum((run.react?.callsPerTurn ?? []).map((ids) => Math.max(0, ...ids.map((id) => t.get(id) ?? 0))));
  return sum([...t.values()]);
}

/** Step weights keyed by id; llm steps are numbered in plan order for `weight`'s index. */
function weights(steps: readonly TaskStep[], weight: (s: TaskStep, llmIndex: number) => number): Map<string, number> {
  let llm = 0;
  return new Map(steps.map((s) => [s.id, weight(s, s.kind === 'llm' ? llm++ : -1)]));
}

/** Longest path through the DAG, each step weighing `t`. */
export function criticalPath(steps: readonly TaskStep[], t: ReadonlyMap<string, number>): number {
  const finish = new Map<string, number>();
  for (const s of steps)
    finish.set(s.id, Math.max(0, ...s.dependsOn.map((d) => finish.get(d) ?? 0)) + (t.get(s.id) ?? 0));
  return Math.max(0, ...finish.values());
}

/**
 * How long the DAG takes when each step starts as soon as its dependencies have ended and one of `slots` is free,
 * ready steps taken in plan order (as Steward's dispatcher does); with enough slots, the critical path.
 */
export function scheduledSpan(steps: readonly TaskStep[], t: ReadonlyMap<string, number>, slots: number): number {
  const end = new Map<string, number>();
  const pending = [...steps];
  let running: number[] = [];
  let now = 0;
  while (pending.length > 0) {
    for (const s of [...pending]) {
      if (running.length >= slots) break;
      if (!s.dependsOn.every((d) => (end.get(d) ?? Infinity) <= now)) continue;
      const e = now + (t.get(s.id) ?? 0);
      end.set(s.id, e);
      running.push(e);
      pending.splice(pending.indexOf(s), 1);
    }
    if (running.length === 0) break;
    now = Math.min(...running);
    running = running.filter((e) => e > now);
  }
  return Math.max(0, ...end.values());
}

function planBreakdown(task: BenchTask, mode: RowMode, run: ModeRun): Pick<RunRow, 'toolPhaseMs' | 'overhead'> {
  const llm = run.spans.filter((s) => s.kind === 'llm');
  const planner = llm.filter((s) => s.name === 'planner');
  const synth = llm.find((s) => s.name === 'synthesizer');
  const work = run.spans.filter((s) => s.kind === 'tool' || (s.kind === 'llm' && s.name === 'llm_step'));
  const first = planner[0];
  const plannerEnd = planner.at(-1)?.end;
  if (!first || plannerEnd === undefined || !synth || work.length === 0) return {};
  const workStart = Math.min(...work.map((s) => s.start));
  const workEnd = Math.max(...work.map((s) => s.end));
  const measured = measuredWeights(task, work);
  const idealWork = mode === 'plan-execute' ? criticalPath(task.steps, measured) : sum([...measured.values()]);
  const store = run.spans.filter((s) => s.kind === 'store');
  const busy = intervals(run.spans.filter((s) => s.kind !== 'store'));
  const phases = {
    prePlan: first.start - run.t0,
    approve: workStart - plannerEnd,
    steps: workEnd - workStart - idealWork,
    finish: synth.start - workEnd,
    report: run.t0 + run.wallMs - synth.end,
  };
  return {
    toolPhaseMs: synth.start - plannerEnd,
    overhead: {
      ...phases,
      total: sum(Object.values(phases)),
      storeCalls: store.length,
      storeMs: sum(store.map((s) => s.end - s.start)),
      storeExposedMs: exclusiveMs(intervals(store), busy),
    },
  };
}

/**
 * Measured duration of each step's call. Tool calls are matched to steps by tool and arguments, then (for steps
 * whose arguments were references) by order; llm-step calls go to llm steps in plan order.
 */
function measuredWeights(task: BenchTask, work: readonly Span[]): Map<string, number> {
  const out = new Map<string, number>();
  const tools = work.filter((s) => s.kind === 'tool').sort((a, b) => a.start - b.start);
  const used = new Set<Span>();
  for (const step of task.steps.filter((s) => s.kind === 'tool')) {
    const exact = tools.find((c) => !used.has(c) && c.name === step.tool && c.detail === JSON.stringify(step.args));
    if (exact) {
      used.add(exact);
      out.set(step.id, exact.end - exact.start);
    }
  }
  for (const step of task.steps.filter((s) => s.kind === 'tool' && !out.has(s.id))) {
    const next = tools.find((c) => !used.has(c) && c.name === step.tool);
    if (next) {
      used.add(next);
      out.set(step.id, next.end - next.start);
    }
  }
  const llmCalls = work.filter((s) => s.kind === 'llm').sort((a, b) => a.start - b.start);
  task.steps
    .filter((s) => s.kind === 'llm')
    .forEach((s, i) => {
      const c = llmCalls[i];
      if (c) out.set(s.id, c.end - c.start);
    });
  return out;
}

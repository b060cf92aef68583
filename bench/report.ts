/**
 * The Markdown report: environment and settings, the targets with what was measured, one section per benchmark of
 * the spec (issue 6), and placeholders for the ones still pending.
 */
import type { CatalogSizeResult } from './catalog-size.ts';
import type { ProfileEntry } from './cpu-profile.ts';
import { profileTable } from './cpu-profile.ts';
import { environmentLines, type Environment } from './environment.ts';
import { DEFAULT_LATENCY } from './latency-model.ts';
import { DEFAULT_MAX_PARALLEL } from '../src/config.ts';
import { BENCH_MAX_PARALLEL, MODES } from './mode-runner.ts';
import type { OverheadRow } from './overhead.ts';
import type { PeerSection } from './against-peer.ts';
import type { BenchProfile } from './profile.ts';
import { peerSection, peerTargetRows } from './report-peer.ts';
import {
  achievedByShape,
  againstReactTable,
  modesTable,
  paired,
  parallelTable,
  rateLimitTable,
  runOverheadTable,
} from './report-react.ts';
import type { RunRow } from './run-analysis.ts';
import { header, median, pct, row } from './stats.ts';
import { targetRows } from './targets.ts';

/** A CPU profile summary for the report. */
export interface ProfileSummary {
  what: string;
  busyMs: number;
  per: number;
  unit: string;
  self: ProfileEntry[];
  inclusive: ProfileEntry[];
}

/** Everything a bench run produced. */
export interface BenchResults {
  profile: BenchProfile;
  env: Environment;
  durationS: number;
  reactRows: RunRow[];
  /** The comparison against LangGraph (section 1b). */
  peer: PeerSection;
  limitedRows: RunRow[];
  overhead: { lines: string[]; rows: OverheadRow[] };
  profiles: ProfileSummary[];
  steering: string[];
  /** Sections 4 (Stop breakdown), 5 and 6 (concurrency, button acks) through the Slack adapter, when run. */
  slackSections?: string[];
  /** Process warnings by name, with how many were emitted. */
  warnings: Record<string, number>;
  /** The planner's prompt with 20 and with 500 tools connected (issue 13, item 5). */
  catalog?: CatalogSizeResult;
}

function settingsLines(r: BenchResults): string[] {
  const p = r.profile;
  const l = DEFAULT_LATENCY;
  const planner = r.reactRows
    .filter((x) => x.mode === 'plan-execute' && x.shape === 'fan-8')
    .map((x) => x.roles['planner']?.modelMs ?? NaN);
  return [
    `- Profile **${p.name}**: latency scale ${p.scale}, seed ${p.seed}, ${p.rounds} measured rounds of ${new Set(r.reactRows.map((x) => x.task)).size} tasks × ${MODES.length} modes after a warm-up pass (6 tasks in every mode), modes and tasks interleaved in rotated order; the whole bench took ${Math.round(r.durationS)} s.`,
    `- Fake LLM (own process): latency = scale × (${l.ttftMs} ms + input tokens ÷ ${l.prefillTokensPerSec.toLocaleString('en-US')}/s + output tokens ÷ ${l.outputTokensPerSec}/s) × log-normal jitter (σ ${l.jitter}) seeded by the request body. An 8-step planner call modelled at ${Math.round(median(planner))} ms here, ${Math.round(median(planner) / p.scale)} ms at scale 1. Tokens are counted by the server from the whole request (every message, re-sent history included, and the response schema), 4 characters a token.`,
    `- Tools: server-everything over stdio (\`everything\`) and Streamable HTTP (\`web\`), server-filesystem on a generated tree of 50 KB files (\`fs\`), the audit fixture's \`sleep\` (\`audit\`); sleeps and long operations are scaled too. PostgreSQL logging on. Plan-execute runs with maxParallel ${BENCH_MAX_PARALLEL} (Steward's default is ${DEFAULT_MAX_PARALLEL}), auto-approved (all plans are low risk).`,
    '- Medians over tasks × rounds, with p25–p75 in brackets; ratios are taken per pair (same task and round) before the median. Raw rows: `bench/out/rows.jsonl`.',
    `- Process warnings during the run: ${
      Object.entries(r.warnings)
        .map(([name, n]) => `${name} × ${n}`)
        .join(', ') || 'none'
    }${r.warnings['MaxListenersExceededWarning'] ? " (abort listeners left on the MCP SDK Streamable HTTP transport's shared signal by concurrent calls: they pile up, about one per concurrent call)" : ''}.`,
  ];
}

function section1(r: BenchResults): string[] {
  return [
    '## 1. Against ReAct',
    '',
    "Analytic wall time per mode, from the latencies the fake applied to that very run and the tasks' modelled tool times T (sleeps; llm steps count with their modelled latency; tools that answer at once count 0): ReAct = ΣL + ΣT (the spec's (N+1)·L + ΣT), plan-execute = L(planner) + L(report) + critical path of T (the spec's 2L + CP), plan-execute with maxParallel 1 = the same with ΣT. Each call keeps its own L: a planner call writing a whole plan costs more than a ReAct turn writing one call.",
    '',
    ...modesTable(r.reactRows),
    '',
    'Ratios against plan-execute (above 1: plan-execute is faster or leaner). "limit" is the analytic ratio, "achieved" the measured ratio as a share of it.',
    '',
    ...againstReactTable(r.reactRows),
    '',
    '### Under 429s',
    '',
    ...rateLimitTable(r.limitedRows, r.profile.rateLimit.every, r.profile.rateLimit.retryAfterMs),
  ];
}

function section2(r: BenchResults): string[] {
  return [
    '## 2. Parallel against sequential',
    '',
    "Plan-execute with maxParallel 1 against the same plans in parallel, on the tasks whose tools take time (the others have nothing to overlap). Tool phase = planner answer → report writer called, so it includes Steward's bookkeeping around the steps; the limit is ΣT ÷ critical path of T. End to end adds the two LLM calls to both sides.",
    '',
    ...parallelTable(r.reactRows),
  ];
}

function section3(r: BenchResults): string[] {
  const pe = r.reactRows.filter((x) => x.mode === 'plan-execute');
  const out = [
    '## 3. Dispatcher overhead',
    '',
    '### The RunDriver alone',
    '',
    ...r.overhead.lines,
    '',
    '### A whole plan-execute run through `Steward`, LLM and tools taken out',
    '',
    `Per phase, from the timeline of each run (LLM calls, tool calls and store calls are timed at the ports). "between steps" = first step sent → last step done, less the measured tool calls on the critical path. "store ms not hidden" = time in store calls while no LLM or tool call was in flight. PostgreSQL, ${pe.length} runs.`,
    '',
    ...runOverheadTable(r.reactRows),
  ];
  for (const p of r.profiles) {
    out.push(
      '',
      `### CPU profile: ${p.what}`,
      '',
      `${p.busyMs.toFixed(0)} ms of busy CPU on the main thread (${(p.busyMs / p.per).toFixed(2)} ms ${p.unit}). Top self time:`,
      '',
      ...profileTable(p.self, p.per, p.unit),
      '',
      'Project functions by inclusive time (each counted once per sample):',
      '',
      ...profileTable(p.inclusive, p.per, p.unit),
    );
  }
  return out;
}

function pending(): string[] {
  const note = 'Not measured in this run (BENCH_SECTIONS left out 4-6; run `node --import tsx bench/sections-4-6.ts`).';
  return [
    '## 5. Concurrent runs in one process (10 to 1,000)',
    '',
    `${note} To come: throughput, latency inflation, event-loop delay p99, memory per run, pool waits, 429s from the fake Slack.`,
    '',
    '## 6. Button press → HTTP acknowledgement',
    '',
    `${note} To come: acknowledgement p50/p99 idle and at the saturation point of (5), duplicate runs on replayed events.`,
  ];
}

/** The report of `BENCH_ONLY=peer`: the environment, the targets against LangGraph and section 1b. */
export function renderPeerReport(r: Pick<BenchResults, 'profile' | 'env' | 'durationS' | 'peer'>): string {
  const out = [
    `# Steward against LangGraph (${r.profile.name} profile, BENCH_ONLY=peer)`,
    '',
    ...environmentLines(r.env),
    `- Latency scale ${r.profile.scale}, seed ${r.profile.seed}, ${r.profile.rounds} measured rounds after a warm-up pass; ${Math.round(r.durationS)} s in all.`,
    '',
    '## Targets (issue 13)',
    '',
    ...header(['target', 'goal', 'measured', 'met'], 2),
    ...peerTargetRows(r.peer).map((t) => row([t.target, t.goal, t.measured, t.met])),
    '',
    ...peerSection(r.peer, r.profile.scale),
  ];
  return `${out.join('\n')}\n`;
}

/** Renders the whole report. */
export function renderReport(r: BenchResults): string {
  const out = [
    `# Steward benchmarks (${r.profile.name} profile)`,
    '',
    ...environmentLines(r.env),
    ...settingsLines(r),
    '',
    '## Targets',
    '',
    ...header(['target (issues 6 and 13)', 'goal', 'measured', 'met'], 2),
    ...targetRows(r).map((t) => row([t.target, t.goal, t.measured, t.met])),
    '',
    ...section1(r),
    '',
    ...peerSection(r.peer, r.profile.scale),
    '',
    ...section2(r),
    '',
    ...section3(r),
    '',
    '## 4. Pause and Stop',
    '',
    'Through the engine (console level):',
    '',
    ...r.steering,
    '',
    ...(r.slackSections ?? pending()),
    ...(r.catalog ? ['', ...r.catalog.markdown] : []),
  ];
  return `${out.join('\n')}\n`;
}

export { achievedByShape, paired, pct };

/** Section 8's Markdown: fires, lateness, event-loop delay and model calls of N workflows due at one instant. */
import type { CpuWindow } from './workflow-cpu.ts';
import { profileTable, type ProfileEntry } from './cpu-profile.ts';
import { header, int, quantile, row } from './stats.ts';
import { workflowTargets } from './targets.ts';

/** What the workflow bench measured. */
export interface WorkflowFiresResult {
  count: number;
  /** The instant every schedule was due (ISO). */
  scheduledAt: string;
  /** Rows in `workflow_fires` (any time), at T, and at T with outcome `started`. */
  fireRows: number;
  firesAtT: number;
  started: number;
  /** Fires at T beyond one per workflow; workflows without a fire at T. */
  duplicateFires: number;
  missedFires: number;
  /** `lookup` calls the audit server received; beyond one per workflow carrying T; workflows with none; calls not carrying T. */
  auditCalls: number;
  duplicateCalls: number;
  missedCalls: number;
  offTimeCalls: number;
  /** Per fire: `workflow_fires.started_at` − T (claimed, run created). */
  claimMs: number[];
  /** Per fire: its run's move to `running` committed (offered on its saved approval) − T. */
  runningMs: number[];
  /** Per fire: its run's first `step_attempts.started_at` − T. */
  startMs: number[];
  /** Event-loop delay from T − 1 s until every run reported, ms. */
  eld: { p50: number; p99: number; max: number };
  /** T → the last run's `completed` committed; T → the last report sent. */
  completedMs: number;
  reportedMs: number;
  /** Requests the fake LLM received, by role. */
  llm: Record<string, number>;
  /** CPU used from T − 1 s until every run reported. */
  cpu: CpuWindow;
  /** Connections in Steward's pool. */
  poolMax: number;
  /** Messages Steward handed to its notifier. */
  sent: number;
  /** Statements Steward ran from T − 1 s on, by verb and first table (BEGIN and COMMIT not counted). */
  statements: { kind: string; count: number; ms: number }[];
  logs: { warnings: number; errors: number; first: string[] };
  /** The whole section, seeding and the wait for T included. */
  sectionS: number;
  rows: object[];
  profile?: { busyMs: number; self: ProfileEntry[]; inclusive: ProfileEntry[] };
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const spreadRow = (what: string, xs: readonly number[]) =>
  row([what, ms(quantile(xs, 0.5)), ms(quantile(xs, 0.99)), ms(Math.max(...xs))]);

/** Renders section 8. */
export function renderWorkflowFires(r: WorkflowFiresResult): string[] {
  const n = int(r.count);
  const targets = workflowTargets(r);
  const out = [
    `## 8. Recurring workflows: ${n} schedules due in the same minute`,
    '',
    `One Steward process on PostgreSQL (fresh database, production settings, pool of ${r.poolMax}), the audit MCP ` +
      `server over stdio, the fake LLM in its own process (the report writer answers at once). ${n} workflows seeded ` +
      'through the store, each a one-step plan `audit.lookup {answer: <its name>, at: fire.time}` pinned to the ' +
      `tool's definition, risk low, running on its saved approval, with one daily schedule due at ${r.scheduledAt}. ` +
      `The scheduler was started 15 to 75 s before T (T is the first whole minute at least 15 s after seeding); event-loop delay is sampled from T − 1 s until every run reported. ` +
      `The section took ${Math.round(r.sectionS)} s.`,
    '',
    ...header(['lateness after the scheduled time (ms)', 'p50', 'p99', 'max']),
    spreadRow('fire claimed: its run created, running on its saved approval (`workflow_fires.started_at`)', r.claimMs),
    // A fire its saved approval covers is stored running by the claim itself; a separate move shows only when held.
    ...(r.runningMs.some(Number.isFinite)
      ? [spreadRow('run offered: moved to `running` on its saved approval (committed)', r.runningMs)]
      : []),
    spreadRow("**start lateness** (the run's first step started; judged by the target)", r.startMs),
    row(['event-loop delay (`monitorEventLoopDelay`, 10 ms resolution)', ms(r.eld.p50), ms(r.eld.p99), ms(r.eld.max)]),
    '',
    ...header(['what happened', 'count']),
    row(['`workflow_fires` rows at T / all rows / outcome `started`', `${r.firesAtT} / ${r.fireRows} / ${r.started}`]),
    row(['duplicate fires / workflows with no fire at T', `${r.duplicateFires} / ${r.missedFires}`]),
    row([
      '`lookup` calls at the audit server / duplicates / workflows never called with T / calls not carrying T',
      `${r.auditCalls} / ${r.duplicateCalls} / ${r.missedCalls} / ${r.offTimeCalls}`,
    ]),
    row(['T → last run completed / last report sent (ms)', `${ms(r.completedMs)} / ${ms(r.reportedMs)}`]),
    row([
      'model requests: planner / report writer / other',
      `${r.llm['planner'] ?? 0} / ${r.llm['synthesizer'] ?? 0} / ${otherCalls(r.llm)}`,
    ]),
    row([
      `CPU from T − 1 s until all reported (${(r.cpu.wallMs / 1000).toFixed(1)} s): machine busy (${r.cpu.cores} cores) / ` +
        'Steward process, ms per fire / all PostgreSQL processes, ms per fire',
      `${(r.cpu.machineBusy * 100).toFixed(0)}% / ${(r.cpu.stewardMs / r.count).toFixed(1)} / ` +
        `${(r.cpu.postgresMs / r.count).toFixed(1)}`,
    ]),
    row([
      'messages sent (cards, reports) / warnings / errors logged',
      `${r.sent} / ${r.logs.warnings} / ${r.logs.errors}`,
    ]),
    '',
    ...header(['target (issue 15)', 'goal', 'measured', 'met'], 2),
    ...targets.map((t) => row([t.target, t.goal, t.measured, t.met])),
    '',
    `Statements Steward ran from T − 1 s until every run reported (per fire; BEGIN/COMMIT not counted; time is ` +
      "from Kysely's call to the rows, so it includes waiting for the event loop):",
    '',
    ...header(['statement', 'per fire', 'ms each (mean)']),
    ...r.statements.map((s) => row([`\`${s.kind}\``, (s.count / r.count).toFixed(2), (s.ms / s.count).toFixed(2)])),
    row([
      'all',
      (r.statements.reduce((a, s) => a + s.count, 0) / r.count).toFixed(2),
      (
        r.statements.reduce((a, s) => a + s.ms, 0) /
        Math.max(
          1,
          r.statements.reduce((a, s) => a + s.count, 0),
        )
      ).toFixed(2),
    ]),
    ...(r.logs.first.length > 0 ? ['', 'First warnings and errors:', '', ...r.logs.first.map((l) => `- ${l}`)] : []),
  ];
  if (r.profile) {
    const per = r.count;
    out.push(
      '',
      `CPU profile of the fire window: ${r.profile.busyMs.toFixed(0)} ms of busy CPU on the main thread ` +
        `(${(r.profile.busyMs / per).toFixed(2)} ms per fire). Top self time:`,
      '',
      ...profileTable(r.profile.self, per, 'per fire'),
      '',
      'Project functions by inclusive time:',
      '',
      ...profileTable(r.profile.inclusive, per, 'per fire'),
    );
  }
  return out;
}

function otherCalls(llm: Record<string, number>): number {
  return Object.entries(llm)
    .filter(([role]) => role !== 'planner' && role !== 'synthesizer')
    .reduce((a, [, c]) => a + c, 0);
}

/**
 * The chaos test's verdict, computed only from what was observed (pure): the audit server's log (calls it really
 * received), the fake Slack's records (reports posted, per thread), the database's rows (runs, step attempts,
 * decisions) and the test's own log of what it sent (mentions, Stop presses). Nothing here is taken from Steward's
 * own account of itself unless it is checked against one of the others.
 */
import { IDEMPOTENT_TOOLS, parseRequest, parseTag } from './chaos-plans.ts';
import type { AuditLine } from './chaos-cluster.ts';

/** A mention the test sent. */
export interface SentRequest {
  k: number;
  template: string;
  threadTs: string;
  /** Whether a process answered 200 (Slack stops retrying then). */
  delivered: boolean;
}

/** A Stop the test pressed: the run's status just before, and whether the press was answered 200. */
export interface StopPress {
  runId: string;
  at: number;
  via: string;
  statusBefore: string;
  delivered: boolean;
}

export interface RunRow {
  id: string;
  status: string;
  request: string;
  conversation_key: string;
  requester_id: string;
  report_due: boolean;
}

export interface AttemptRow {
  run_id: string;
  step_id: string;
  attempt: number;
  status: string;
  args: unknown;
  error: unknown;
  ended_at: Date | null;
}

export interface DecisionRow {
  run_id: string;
  action: string;
  accepted: boolean;
  note: string | null;
  created_at: Date;
}

export interface ChaosObservations {
  requests: SentRequest[];
  stops: StopPress[];
  audit: AuditLine[];
  runs: RunRow[];
  attempts: AttemptRow[];
  decisions: DecisionRow[];
  /** Report statuses posted in each thread (by thread ts), from the fake Slack's recorded calls. */
  reports: Map<string, string[]>;
  /** Ephemeral notices in each thread (refusals of presses land here). */
  ephemerals: Map<string, string[]>;
  /** The text of every message posted in each thread, in order. */
  posts: Map<string, string[]>;
}

/** One invariant: how many cases break it (0 passes) and a few of them, described. */
export interface Check {
  name: string;
  failures: number;
  examples: string[];
}

export interface ChaosTally {
  counts: Array<[string, number | string]>;
  checks: Check[];
  /** Not invariants: what a reader needs to judge the run (why runs wait, what was said). */
  notes: Array<{ name: string; lines: string[] }>;
}

const WAITING = new Set(['paused', 'awaiting_review']);
const ENDED = new Set(['completed', 'failed', 'stopped', 'cancelled']);

/** Counts and invariants from what was observed. */
export function tallyChaos(o: ChaosObservations): ChaosTally {
  const runsByK = new Map<number, RunRow[]>();
  for (const r of o.runs) {
    const k = parseRequest(r.request)?.k;
    if (k !== undefined) runsByK.set(k, [...(runsByK.get(k) ?? []), r]);
  }
  const runOfK = (k: number) => runsByK.get(k)?.[0];
  const calls = o.audit.filter((a) => a.type === 'call');
  const callsByTag = groupBy(calls, (c) => c.args.tag ?? '?');
  const attemptsByTag = groupBy(o.attempts, (a) => tagOf(a.args) ?? `?${a.run_id}.${a.step_id}`);
  const resumesByRun = new Map<string, number>();
  for (const d of o.decisions)
    if (d.action === 'resume' && d.accepted) resumesByRun.set(d.run_id, (resumesByRun.get(d.run_id) ?? 0) + 1);

  // Non-idempotent steps called more than once, beyond the resumes a person chose.
  const duplicated = new CheckList('non-idempotent steps called more than once without a person resuming them');
  for (const [tag, cs] of callsByTag) {
    if (IDEMPOTENT_TOOLS.has(cs[0]!.name)) continue;
    const run = runOfK(parseTag(tag)?.k ?? -1);
    const allowed = 1 + (run ? (resumesByRun.get(run.id) ?? 0) : 0);
    if (cs.length > allowed) duplicated.add(`${tag}: ${cs.length} calls (by ${cs.map((c) => c.caller).join(', ')})`);
  }

  // A step whose success was stored, called again after that.
  const again = new CheckList('finished steps called again');
  for (const [tag, attempts] of attemptsByTag) {
    const ends = attempts.filter((a) => a.status === 'succeeded' && a.ended_at).map((a) => a.ended_at!.getTime());
    if (ends.length === 0) continue;
    const firstEnd = Math.min(...ends);
    const later = (callsByTag.get(tag) ?? []).filter((c) => c.at > firstEnd);
    if (later.length > 0 || ends.length > 1)
      again.add(`${tag}: ${ends.length} stored successes, ${later.length} call(s) after the first`);
  }

  // Reports: exactly one for every ended run; none missing, never two.
  const noReport = new CheckList('ended runs with no report');
  const twoReports = new CheckList('runs with more than one report');
  const stuck = new CheckList('runs neither ended nor waiting on a person');
  for (const r of o.runs) {
    const reports = o.reports.get(threadOf(r.conversation_key)) ?? [];
    if (reports.length > 1) twoReports.add(`${label(r)}: ${reports.length} reports (${reports.join(', ')})`);
    if (ENDED.has(r.status) && reports.length === 0) noReport.add(`${label(r)} ended ${r.status}, no report`);
    if (!ENDED.has(r.status) && !WAITING.has(r.status)) stuck.add(`${label(r)} is still ${r.status}`);
  }

  // Requests: each delivered mention is one run.
  const lost = new CheckList('delivered requests that are not exactly one run');
  for (const q of o.requests) {
    const n = runsByK.get(q.k)?.length ?? 0;
    if (q.delivered && n !== 1) lost.add(`#${q.k} (${q.template}, thread ${q.threadTs}): ${n} runs`);
  }

  // Stops pressed on an active run must end it stopped, with no call started after the Stop.
  const stopMissed = new CheckList('Stops on an active run that did not take effect');
  const pressedActive = o.stops.filter((s) => s.delivered && ['running', 'paused'].includes(s.statusBefore));
  for (const s of pressedActive) {
    const run = o.runs.find((r) => r.id === s.runId);
    const k = run ? parseRequest(run.request)?.k : undefined;
    const after = calls.filter((c) => parseTag(c.args.tag)?.k === k && c.at > s.at + 1_000);
    if (run?.status === 'stopped' && after.length === 0) continue;
    const refusals = o.decisions
      .filter((d) => d.run_id === s.runId && d.action === 'stop' && !d.accepted)
      .map((d) => d.note ?? '');
    const notices = run ? (o.ephemerals.get(threadOf(run.conversation_key)) ?? []) : [];
    const why = [...new Set([...refusals, ...notices])].join(' | ') || 'no refusal recorded';
    stopMissed.add(
      `${run ? label(run) : s.runId} via ${s.via}: now ${run?.status ?? '?'}, ${after.length} call(s) later; ${why}`,
    );
  }

  // The audit log and the step attempts agree call for call (matched by tag).
  const unrecorded = new CheckList('calls the audit server received with no step attempt stored');
  const uncalled = new CheckList('succeeded step attempts the audit server never received');
  let rowsWithoutCall = 0;
  for (const tag of new Set([...callsByTag.keys(), ...attemptsByTag.keys()])) {
    const c = callsByTag.get(tag) ?? [];
    const a = attemptsByTag.get(tag) ?? [];
    if (c.length > a.length) unrecorded.add(`${tag}: ${c.length} calls, ${a.length} attempts`);
    if (a.length > c.length) rowsWithoutCall += a.length - c.length;
    if (a.some((x) => x.status === 'succeeded') && c.length === 0) uncalled.add(`${tag}: succeeded, never called`);
  }

  // A restart notice is news: each step it names was found in flight by a takeover (its attempt ended interrupted
  // then), so a run waiting through several takeovers is not told the same thing again at each one.
  const repeated = new CheckList('restart notices naming steps no takeover found in flight');
  for (const r of o.runs) {
    const named = (o.posts.get(threadOf(r.conversation_key)) ?? []).flatMap((t) => {
      const m = /Steward restarted while (.+?) (?:was|were) running/u.exec(t);
      return m ? m[1]!.split(', ') : [];
    });
    for (const [step, times] of countBy(named)) {
      const found = o.attempts.filter(
        (a) => a.run_id === r.id && a.step_id === step && (a.error as { code?: string } | null)?.code === 'interrupted',
      ).length;
      if (times > found)
        repeated.add(`${label(r)}: ${step} named in ${times} notices, found in flight ${found} time(s)`);
    }
  }

  const waitingWhy = o.runs
    .filter((r) => WAITING.has(r.status))
    .map((r) => {
      const said = (o.posts.get(threadOf(r.conversation_key)) ?? []).filter((t) => /^(⚠️|⏸️ Holding)/u.test(t));
      return `${label(r)} ${r.status}: ${said.at(-1)?.slice(0, 160) ?? 'no warning or hold posted'}`;
    });
  const recoveries = [...o.posts.values()].flat().filter((t) => t.includes('Steward restarted')).length;
  const status = (s: string) => o.runs.filter((r) => r.status === s).length;
  const stopsAccepted = o.decisions.filter((d) => d.action === 'stop' && d.accepted).length;
  const counts: Array<[string, number | string]> = [
    ['requests sent', o.requests.length],
    ['requests delivered (HTTP 200)', o.requests.filter((q) => q.delivered).length],
    ['runs', o.runs.length],
    ['  completed', status('completed')],
    ['  failed', status('failed')],
    ['  stopped', status('stopped')],
    ['  cancelled', status('cancelled')],
    ['  waiting on a person (paused / awaiting review)', status('paused') + status('awaiting_review')],
    ['  unfinished (planning / running / stopping)', status('planning') + status('running') + status('stopping')],
    ['tool calls received by the audit server', calls.length],
    ['  of them non-idempotent (record)', calls.filter((c) => !IDEMPOTENT_TOOLS.has(c.name)).length],
    ['  cancellations received', o.audit.filter((a) => a.type === 'cancelled').length],
    ['step attempts stored', o.attempts.length],
    ['  attempts with no call received (crash between intent and call, or lost)', rowsWithoutCall],
    ['non-idempotent steps called more than once (no resume)', duplicated.failures],
    ['finished steps called again', again.failures],
    ['runs with 0 reports (ended)', noReport.failures],
    ['runs with >1 report', twoReports.failures],
    ['Stops pressed (delivered)', o.stops.filter((s) => s.delivered).length],
    ['  on a running or paused run', pressedActive.length],
    ['  accepted (decisions)', stopsAccepted],
    ['  took effect (run ended stopped, no later call)', pressedActive.length - stopMissed.failures],
    ['audit calls with no stored attempt', unrecorded.failures],
    ['"Steward restarted…" notices posted in Slack', recoveries],
  ];
  return {
    counts,
    checks: [duplicated, again, noReport, twoReports, stuck, lost, stopMissed, unrecorded, uncalled, repeated],
    notes: [
      { name: 'Runs waiting on a person, with the last warning or hold posted in their thread', lines: waitingWhy },
    ],
  };
}

/** The tally as text: the counts, then each invariant with PASS or FAIL and up to `examples` cases. */
export function formatTally(t: ChaosTally, examples = 8): string {
  const width = Math.max(...t.counts.map(([k]) => k.length));
  const lines = ['Counts:', ...t.counts.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), '', 'Invariants:'];
  for (const c of t.checks) {
    lines.push(`  ${c.failures === 0 ? 'PASS' : 'FAIL'}  ${c.name}${c.failures ? `: ${c.failures}` : ''}`);
    for (const e of c.examples.slice(0, examples)) lines.push(`          - ${e}`);
    if (c.examples.length > examples) lines.push(`          - … and ${c.examples.length - examples} more`);
  }
  for (const n of t.notes.filter((x) => x.lines.length > 0)) {
    lines.push('', `${n.name}:`, ...n.lines.map((l) => `  - ${l}`));
  }
  return lines.join('\n');
}

/** Whether every invariant held. */
export function chaosPassed(t: ChaosTally): boolean {
  return t.checks.every((c) => c.failures === 0);
}

class CheckList implements Check {
  failures = 0;
  examples: string[] = [];
  constructor(readonly name: string) {}
  add(example: string): void {
    this.failures += 1;
    this.examples.push(example);
  }
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}

function countBy(items: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(item, (out.get(item) ?? 0) + 1);
  return out;
}

function tagOf(args: unknown): string | undefined {
  const tag = args && typeof args === 'object' ? (args as { tag?: unknown }).tag : undefined;
  return typeof tag === 'string' ? tag : undefined;
}

/** A Slack conversation key is `<channel>:<thread ts>`. */
function threadOf(conversationKey: string): string {
  return conversationKey.slice(conversationKey.indexOf(':') + 1);
}

function label(r: RunRow): string {
  const q = parseRequest(r.request);
  return q ? `#${q.k} ${q.template} (run ${r.id.slice(0, 8)})` : `run ${r.id.slice(0, 8)}`;
}

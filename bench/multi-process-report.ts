/** Section 7's Markdown: Stop latency across processes against at the holder, and throughput with 1, 2, 3 processes. */
import { header, median, quantile, row } from './stats.ts';

/** One Stop sample: a run held by p1, Stop pressed through p2 (`cross`) or p1 (`holder`). */
export interface StopRow {
  section: 'multi-process-stop';
  kind: 'cross' | 'holder';
  k: number;
  /** The process whose MCP server received the call (p1 expected). */
  holder: string;
  via: string;
  /** Press sent → the MCP server logged the cancellation; NaN when the call ran to its end instead. */
  cancelledMs: number;
  /** Press sent → the report accepted by Slack. */
  reportMs: number;
  report: string;
}

/** One batch of runs sent round-robin to the live processes. */
export interface BatchRow {
  section: 'multi-process-throughput';
  label: string;
  processes: number;
  runs: number;
  /** First mention sent → last report accepted by Slack. */
  wallMs: number;
  /** Per run: its mention sent → its report accepted. */
  runMs: number[];
  /** Runs reported `completed`. */
  completed: number;
  /** Runs that never reported, each with what the database says of it. */
  stuck: string[];
  /** Runs whose steps were called by another process than the one mentioned. */
  elsewhere: number;
}

const TARGET_P99_MS = 50;
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');

/** Renders section 7. */
export function renderMultiProcess(r: {
  stops: StopRow[];
  batches: BatchRow[];
  cpus: number;
  /** 1-minute load average at the section's start and end. */
  load: [number, number];
  plannerDelayMs: number;
  /** How long without a new report made the missing runs of a batch count as stuck. */
  stallMs: number;
  problems: string[];
}): string[] {
  return [
    '## 7. Several processes on one database',
    '',
    `Real Steward processes (\`src/main.ts\`, Slack HTTP mode) on one private PostgreSQL cluster (fsync off), signed ` +
      `requests from the fake Slack, the fake LLM (planner answers after ${r.plannerDelayMs} ms) and the fake Slack in ` +
      `the bench's process, each process with its own chaos audit server (stdio). **${r.cpus} CPUs** on this machine, ` +
      'shared by every process, PostgreSQL, the MCP servers and the fakes; load average (1 min) ' +
      `${r.load[0].toFixed(2)} at the start of the section, ${r.load[1].toFixed(2)} at its end.`,
    '',
    ...stopLines(r.stops),
    '',
    ...throughputLines(r.batches, r.cpus, r.stallMs),
    '',
    r.problems.length === 0
      ? "Warnings and errors in the processes' logs and output: none."
      : "Warnings and errors in the processes' logs and output (times, ids and numbers blanked):",
    ...r.problems.slice(0, 15).map((p) => `- \`${p.replaceAll('`', "'")}\``),
  ];
}

function stopLines(stops: StopRow[]): string[] {
  const of = (kind: StopRow['kind']) => stops.filter((s) => s.kind === kind);
  const stat = (xs: StopRow[], key: 'cancelledMs' | 'reportMs') => {
    const v = xs.map((s) => s[key]);
    return { p50: quantile(v, 0.5), p99: quantile(v, 0.99), max: Math.max(...v.filter(Number.isFinite)) };
  };
  const cross = stat(of('cross'), 'cancelledMs');
  const holder = stat(of('holder'), 'cancelledMs');
  const line = (what: string, xs: StopRow[]) => {
    const c = stat(xs, 'cancelledMs');
    const missed = xs.filter((s) => !Number.isFinite(s.cancelledMs)).length;
    return row([what, xs.length, ms(c.p50), ms(c.p99), ms(c.max), missed, ms(stat(xs, 'reportMs').p50)]);
  };
  const never = stops.filter((s) => s.report.startsWith('never started'));
  const heldElsewhere = stops.filter((s) => s.holder !== 'p1' && !never.includes(s)).length;
  const notStopped = stops.filter((s) => s.report !== 'stopped').length - never.length;
  return [
    '### Stop across processes',
    '',
    'Runs started at p1, first step a 4 s `wait`; once the MCP server has logged the call, Stop is pressed through p2 ' +
      '(not the holder: the decision is queued in the database and p1 woken by NOTIFY) or at p1, interleaved, after a ' +
      'warm-up of each. ms from sending the press to the MCP server logging the cancellation; "missed": the call ran to ' +
      'its end instead, or the run never started its first step. "report p50": press → report in the thread (it follows ' +
      "the card's final update, and a card is updated at most once a second).",
    '',
    ...header(['Stop pressed at…', 'samples', 'p50', 'p99', 'max', 'missed', 'report p50']),
    line('p2, not the holder', of('cross')),
    line('p1, the holder', of('holder')),
    row(['ratio (p2 ÷ p1)', '', (cross.p50 / holder.p50).toFixed(2), (cross.p99 / holder.p99).toFixed(2), '', '', '']),
    '',
    `Target: Stop through another process cancels the call ≤ ${TARGET_P99_MS} ms p99 after the press: ` +
      `${ms(cross.p99)} ms ${cross.p99 <= TARGET_P99_MS ? '✔ met' : '✘ missed'}. ` +
      `Runs held by another process than p1: ${heldElsewhere}; reports other than \`stopped\`: ${notStopped}; ` +
      `runs that never started their first step (counted as missed): ${never.length}.`,
    ...never.slice(0, 5).map((s) => `- request ${s.k}: ${s.report}`),
  ];
}

function throughputLines(batches: BatchRow[], cpus: number, stallMs: number): string[] {
  const levels = [...new Set(batches.map((b) => b.processes))].sort((a, b) => a - b);
  const rate = (b: BatchRow) => b.completed / (b.wallMs / 1000);
  const meanRate = (n: number) => {
    const bs = batches.filter((b) => b.processes === n);
    return bs.reduce((a, b) => a + rate(b), 0) / bs.length;
  };
  const base = meanRate(1);
  const runs = batches[0]?.runs ?? 0;
  const stuck = batches.flatMap((b) => b.stuck.map((x) => `${b.processes} process(es), batch ${b.label}: ${x}`));
  return [
    '### Throughput with 1, 2 and 3 processes',
    '',
    `${runs} runs of three short \`wait\` steps (100 ms and 100 ms side by side, then 50 ms; low risk, so each ` +
      `starts at once), each from its own person, sent at once round-robin to the live processes; wall time from the ` +
      'first mention to the last report. Batches in the order 1, 2, 3, 3, 2, 1 processes, each after an uncounted ' +
      'warm-up batch; processes not in a batch are stopped (SIGTERM).',
    '',
    ...header([
      'processes',
      'CPUs',
      'runs/s per batch',
      'runs/s (mean)',
      'vs 1 process',
      'run p50 / p99 ms',
      'problems',
    ]),
    ...levels.map((n) => {
      const bs = batches.filter((b) => b.processes === n);
      const all = bs.flatMap((b) => b.runMs);
      const bad = bs.reduce((a, b) => a + (b.runs - b.completed) + b.elsewhere, 0);
      return row([
        n,
        cpus,
        bs.map((b) => rate(b).toFixed(1)).join(', '),
        meanRate(n).toFixed(1),
        `${(meanRate(n) / base).toFixed(2)}×`,
        `${median(all).toFixed(0)} / ${quantile(all, 0.99).toFixed(0)}`,
        bad,
      ]);
    }),
    '',
    `"problems": runs not reported \`completed\` (stuck ones included), or whose steps ran at another process than ` +
      'the one mentioned; runs/s counts completed runs only. ' +
      `With ${cpus} CPUs, more processes bring no more CPU, only more of them competing for it.`,
    ...(stuck.length === 0
      ? []
      : [
          '',
          `**${stuck.length} runs never reported** (no report for ${stallMs / 1000} s while the rest of their batch had): ` +
            'they are counted as problems above.',
          '',
          ...stuck.slice(0, 10).map((x) => `- ${x}`),
        ]),
  ];
}

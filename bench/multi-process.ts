/**
 * Section 7, several Steward processes on one database (issue 10): real entry points (`src/main.ts`, Slack HTTP mode)
 * on one private PostgreSQL cluster, driven through the fake Slack (test/chaos/chaos-cluster.ts). Two measurements:
 * - Stop latency: runs started at p1 (their first step a 4 s `wait`), Stop pressed through p2 (queued in the
 *   database, p1 woken by NOTIFY) or at p1 itself, interleaved; ms from sending the press to the MCP server logging
 *   the cancellation (the audit line's clock is this machine's).
 * - Throughput: the same batch of short low-risk runs sent round-robin to 1, 2 and 3 live processes (order 1, 2, 3,
 *   3, 2, 1, so drift over the section cancels); wall time from the first mention to the last report. A run that
 *   never reports is counted as stuck, with its row, rather than failing the section.
 * Skipped, with the reason printed, where no private PostgreSQL cluster can be started.
 */
import { availableParallelism, loadavg } from 'node:os';
import { startChaosCluster, type ChaosCluster } from '../test/chaos/chaos-cluster.ts';
import { requestText, stepTag } from '../test/chaos/chaos-plans.ts';
import type { FakeSlack } from '../test/fakes/fake-slack-server.ts';
import { privatePostgresMissing } from '../test/helpers/private-postgres.ts';
import { buttonOf, cardOf, reportsIn } from '../test/helpers/slack-delivery.ts';
import type { StewardProcess } from '../test/helpers/steward-process.ts';
import { waitUntil } from '../test/helpers/wait.ts';
import { renderMultiProcess, type BatchRow, type StopRow } from './multi-process-report.ts';
import { BENCH_BUDGETS } from './profile.ts';

/** The fake planner's delay, the same for every run of the section (the chaos script's default). */
export const PLANNER_DELAY_MS = 200;
const ORDER = [1, 2, 3, 3, 2, 1];
/** No new report for this long while some are missing: the missing runs are stuck. */
const STALL_MS = 15_000;
/** The channel of every mention; each run has its own thread. */
const CHANNEL = 'C0GENERAL';

interface Settings {
  /** Stop samples each way (BENCH_MP_STOPS). */
  stops: number;
  /**
   * Runs per throughput batch (BENCH_MP_RUNS). Enough to load the processes: at 24 every level measured about one
   * run's latency (≈13 runs/s whatever the number of processes), not what the processes can carry.
   */
  runs: number;
}

function settingsFor(profile: 'quick' | 'full'): Settings {
  const full = profile === 'full';
  return {
    stops: Number(process.env['BENCH_MP_STOPS'] ?? (full ? 60 : 20)),
    runs: Number(process.env['BENCH_MP_RUNS'] ?? (full ? 192 : 96)),
  };
}

/** Runs section 7; returns its Markdown and one raw row per Stop sample and per batch. */
export async function benchMultiProcess(
  profile: 'quick' | 'full',
  log: (line: string) => void = () => undefined,
): Promise<{ markdown: string[]; rows: Record<string, unknown>[] }> {
  if (privatePostgresMissing) {
    log(`section 7 skipped: cannot start a private PostgreSQL cluster: ${privatePostgresMissing}`);
    return {
      markdown: [
        '## 7. Several processes on one database',
        '',
        `Skipped: a private PostgreSQL cluster cannot be started here (${privatePostgresMissing}).`,
      ],
      rows: [{ section: 'multi-process', skipped: privatePostgresMissing }],
    };
  }
  const s = settingsFor(profile);
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  const c = await startChaosCluster({
    processes: 3,
    plannerDelayMs: PLANNER_DELAY_MS,
    env: {
      STEWARD_TOKENS_PER_RUN: String(BENCH_BUDGETS.perRun),
      STEWARD_TOKENS_PER_USER_PER_DAY: String(BENCH_BUDGETS.perUserPerDay),
    },
  });
  try {
    const [p1, p2] = c.processes as [StewardProcess, StewardProcess, StewardProcess];
    await setLive(c, 2);
    let k = 0;
    log(`section 7: ${s.stops} Stop samples each way`);
    const stops: StopRow[] = [];
    // A warm-up sample of each first (not counted); then pairs, their order alternating.
    for (let i = 0; i < s.stops + 1; i++) {
      const pair: StopRow['kind'][] = i % 2 === 0 ? ['cross', 'holder'] : ['holder', 'cross'];
      for (const kind of pair) {
        const row = await stopSample(c, (k += 1), p1, kind === 'cross' ? p2 : p1, kind);
        if (i > 0) stops.push(row);
      }
    }
    const batches: BatchRow[] = [];
    for (const [i, n] of ORDER.entries()) {
      log(`section 7: ${s.runs} runs on ${n} process${n > 1 ? 'es' : ''}`);
      const live = await setLive(c, n);
      // Warm-up (JIT, pool connections) of a process just started, not counted.
      await batch(c, live, () => (k += 1), 2 * n, `W${i}`);
      batches.push(await batch(c, live, () => (k += 1), s.runs, `T${i}`));
    }
    const problems = c.processes.flatMap((p) => logProblems(p));
    return {
      markdown: renderMultiProcess({
        stops,
        batches,
        cpus: availableParallelism(),
        load: [loadAtStart, loadavg()[0] ?? Number.NaN],
        plannerDelayMs: PLANNER_DELAY_MS,
        stallMs: STALL_MS,
        problems,
      }),
      rows: [...stops, ...batches].map((r) => ({ ...r })),
    };
  } finally {
    await c.close();
  }
}

/** Makes the first `n` processes live and the others not (SIGTERM: a clean handover); returns the live ones. */
async function setLive(c: ChaosCluster, n: number): Promise<StewardProcess[]> {
  await Promise.all(
    c.processes.map(async (p, i) => {
      if (i >= n) await p.kill('SIGTERM');
      else if (!p.running()) await p.start();
    }),
  );
  return c.processes.slice(0, n);
}

/** One run started at `holder`, Stop pressed through `via` once its first step is called. */
async function stopSample(
  c: ChaosCluster,
  k: number,
  holder: StewardProcess,
  via: StewardProcess,
  kind: StopRow['kind'],
): Promise<StopRow> {
  // A person per run: Steward holds a person's next plans for review after they stopped the same tools.
  const user = `U0MPS${k}`;
  const sent = await c.delivery.mention(() => holder.eventsUrl, {
    text: requestText(k, 'long'),
    user,
    channel: CHANNEL,
  });
  if (!sent.ok) throw new Error(`request ${k} was not delivered to ${holder.name}: ${JSON.stringify(sent.tries)}`);
  const tag = stepTag(k, 'a');
  const call = await waitUntil(`request ${k}'s first step to be called`, () =>
    c.audit().find((l) => l.type === 'call' && l.args.tag === tag),
  ).catch(() => undefined);
  if (call === undefined) {
    // Stuck before its first step (see the batches' stuck runs): no Stop to measure; counted, not fatal.
    const stuck = await unreported(c, [{ k, to: holder.name, threadTs: sent.threadTs }]);
    return {
      section: 'multi-process-stop',
      kind,
      k,
      holder: '?',
      via: via.name,
      cancelledMs: NaN,
      reportMs: NaN,
      report: `never started: ${stuck.join('')}`,
    };
  }
  const card = await waitUntil(`request ${k}'s card to offer Stop`, () => {
    const m = cardOf(c.slack, sent.threadTs);
    return m && buttonOf(m, 'stop') ? m : undefined;
  });
  const pressed = await c.delivery.press(() => via.eventsUrl, card, 'stop', { user });
  const at = pressed.tries[0]?.at;
  if (!pressed.ok || at === undefined) throw new Error(`Stop for request ${k} refused: ${JSON.stringify(pressed)}`);
  // `ended` instead of `cancelled` means the Stop never reached the call (it ran its 4 s).
  const end = await waitUntil(`request ${k}'s first step to end`, () =>
    c.audit().find((l) => l.type !== 'call' && l.args.tag === tag),
  );
  const reportedAt = await waitUntil(`request ${k}'s report`, () => reportTimes(c.slack).get(sent.threadTs));
  return {
    section: 'multi-process-stop',
    kind,
    k,
    holder: call.caller,
    via: via.name,
    cancelledMs: end.type === 'cancelled' ? end.at - at : Number.NaN,
    reportMs: reportedAt - at,
    report: reportsIn(c.slack, sent.threadTs).join(','),
  };
}

/** `n` runs of the `short` template at once, round-robin over `live`; resolves when every one has reported. */
async function batch(
  c: ChaosCluster,
  live: StewardProcess[],
  nextK: () => number,
  n: number,
  label: string,
): Promise<BatchRow> {
  const specs = Array.from({ length: n }, (_, i) => ({ k: nextK(), to: live[i % live.length] as StewardProcess }));
  const first = Date.now();
  const sent = await Promise.all(
    specs.map(async ({ k, to }) => {
      const text = requestText(k, 'short');
      const d = await c.delivery.mention(() => to.eventsUrl, { text, user: `U0MPT${k}`, channel: CHANNEL });
      if (!d.ok) throw new Error(`request ${k} was not delivered to ${to.name}: ${JSON.stringify(d.tries)}`);
      return { k, to: to.name, threadTs: d.threadTs, sentAt: d.tries.at(-1)?.at ?? first };
    }),
  );
  // Every run reports within seconds. One still without a report when no other has come for STALL_MS is stuck: it is
  // counted, with what the database says of it, instead of failing the section.
  let seen = -1;
  let progressAt = Date.now();
  const times = await waitUntil(
    `${n} reports (${label})`,
    () => {
      const t = reportTimes(c.slack);
      const count = sent.filter((r) => t.has(r.threadTs)).length;
      if (count !== seen) [seen, progressAt] = [count, Date.now()];
      return count === n || Date.now() - progressAt > STALL_MS ? t : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 25 },
  );
  const done = sent.flatMap((r) => {
    const at = times.get(r.threadTs);
    return at === undefined ? [] : [{ ...r, at }];
  });
  const audit = c.audit();
  // A run whose steps were called by another process than the one mentioned was taken over (it should not be).
  const elsewhere = sent.filter((r) =>
    audit.some((l) => l.type === 'call' && l.args.tag?.startsWith(`k${r.k}.`) && l.caller !== r.to),
  ).length;
  const statuses = done.flatMap((r) => reportsIn(c.slack, r.threadTs));
  return {
    section: 'multi-process-throughput',
    label,
    processes: live.length,
    runs: n,
    wallMs: Math.max(...done.map((r) => r.at)) - first,
    completed: statuses.filter((x) => x === 'completed').length,
    runMs: done.map((r) => r.at - r.sentAt),
    stuck: await unreported(
      c,
      sent.filter((r) => !times.has(r.threadTs)),
    ),
    elsewhere,
  };
}

/** What the database and the audit log say about runs that never reported. */
async function unreported(c: ChaosCluster, runs: { k: number; to: string; threadTs: string }[]): Promise<string[]> {
  if (runs.length === 0) return [];
  const { rows } = await c.pool.query<{
    conversation_key: string;
    status: string;
    owner: string | null;
    fence: number;
  }>('SELECT conversation_key, status, owner, fence FROM runs WHERE conversation_key = ANY($1::text[])', [
    runs.map((r) => `${CHANNEL}:${r.threadTs}`),
  ]);
  const audit = c.audit();
  return runs.map((r) => {
    const row = rows.find((x) => x.conversation_key === `${CHANNEL}:${r.threadTs}`);
    const calls = audit.filter((l) => l.type === 'call' && l.args.tag?.startsWith(`k${r.k}.`)).length;
    const held = row ? `${row.status}, owner ${row.owner ?? 'none'}, fence ${row.fence}` : 'no run row';
    return `request ${r.k} (sent to ${r.to}): ${held}, ${calls} calls`;
  });
}

const REPORT_TITLE = /^\*\S+ Report/u;

/** When Slack accepted each thread's first report, by thread (one pass over the recorded calls). */
function reportTimes(slack: FakeSlack): Map<string, number> {
  // Since reports stream, a report is either posted whole or a streamed message (chat.startStream in the thread)
  // that a chat.update turns into the report: its time is then the update's, when the report was complete.
  const streamThread = new Map<string, string>();
  for (const call of slack.callsOf('chat.startStream'))
    if (call.response.ok === true && typeof call.args.thread_ts === 'string' && typeof call.response.ts === 'string')
      streamThread.set(call.response.ts, call.args.thread_ts);
  const out = new Map<string, number>();
  for (const call of slack.calls) {
    const { text } = call.args;
    const thread =
      call.method === 'chat.postMessage'
        ? call.args.thread_ts
        : call.method === 'chat.update'
          ? streamThread.get(String(call.args.ts))
          : undefined;
    if (typeof thread !== 'string' || typeof text !== 'string' || call.response.ok !== true) continue;
    if (REPORT_TITLE.test(text) && !out.has(thread)) out.set(thread, call.at);
  }
  return out;
}

/** Warnings and errors in a process's log and output, counted by their text with times, ids and numbers blanked. */
function logProblems(p: StewardProcess): string[] {
  const lines = `${p.log()}\n${p.output()}`.split('\n').filter((l) => /\b(warn|error)\b/i.test(l));
  const counts = new Map<string, number>();
  for (const l of lines) {
    const key = l
      .replace(/^\S*\d{4}-\d\d-\d\dT\S+\s*/, '')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
      .replace(/\d+/g, '#')
      .slice(0, 200);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([l, n]) => `${p.name}: ${n} × ${l}`);
}

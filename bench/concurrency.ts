/**
 * Sections 5 and 6: many runs at once in one Steward process, started by signed mentions (each in its own channel),
 * with the fake Slack enforcing Slack's rate limits; and the button acknowledgement, idle and under the largest load,
 * plus replayed events. Steward's peers (fake LLM answering at once, fake Slack, the Slack side sending requests) run
 * in their own process, so the event loop measured is Steward's alone.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buttonSection, duplicates, pressAcks, type PressAcks } from './button-acks.ts';
import { busyMs, profileCpu, profileTable, topInclusive, topSelf } from './cpu-profile.ts';
import { renderConcurrency, type LevelRow } from './concurrency-report.ts';
import { heapAfterGc, runFigures, PROBE_CHANNEL, RunTracker, startSampling, type LoadContext } from './run-tracker.ts';
import { epochNow, startSlackPeers } from './slack-peers.ts';
import { planText, startSlackSteward, type SlackSteward } from './slack-steward.ts';
import { median, quantile } from './stats.ts';

/** The load's plan: two 100 ms sleeps side by side, then a 50 ms one (all read-only, low risk: no review). */
export const LOAD_PLAN = planText('Sleep twice side by side, then once more', [
  { id: 'a', tool: 'audit.sleep', args: { ms: 100 } },
  { id: 'b', tool: 'audit.sleep', args: { ms: 100 } },
  { id: 'c', tool: 'audit.sleep', args: { ms: 50 }, dependsOn: ['a', 'b'] },
]);
export const LOAD_REPORT = 'Slept three times.';
/** The probe run's plan: 30 sleeps of 50 s in a chain, so it stays live for the whole bench. */
export const PROBE_PLAN = planText(
  'A long chain of sleeps to press buttons on',
  Array.from({ length: 30 }, (_, i) => ({
    id: `p${i}`,
    tool: 'audit.sleep',
    args: { ms: 50_000 },
    ...(i > 0 ? { dependsOn: [`p${i - 1}`] } : {}),
  })),
);
export const PRESS_EVERY_MS = 50;
/** Runs started in quiet channels (one each) while the busy channel's lane is full: how long their cards wait. */
const QUIET_RUNS = 5;
/** What a finished card's title says. */
export const FINAL_TITLES = ['✅ Completed', '❌ Failed', '⏹️ Stopped', '🚫 Cancelled'];

export interface Settings {
  levels: number[];
  /** Runs started at once in one busy channel (Slack's per-channel limit then bites). */
  busyChannel: number;
  /** Levels run again with the fake Slack's limits off, to separate Slack's throttling from Steward's own cost. */
  unlimited: number[];
  singles: number;
  idlePresses: number;
  timeoutMs: number;
  cpuProfile: boolean;
  /** Steward's pool size (STEWARD_DB_POOL_SIZE's default unless BENCH_DB_POOL_SIZE sets another). */
  poolMax: number | undefined;
}

export function settingsFor(profile: 'quick' | 'full'): Settings {
  const list = (raw: string | undefined, fallback: number[]) =>
    raw
      ? raw
          .split(',')
          .map(Number)
          .filter((x) => x > 0)
      : fallback;
  const full = profile === 'full';
  return {
    levels: list(process.env['BENCH_CONCURRENCY'], full ? [10, 100, 300, 1000] : [10, 100]),
    unlimited: list(process.env['BENCH_CONCURRENCY_UNLIMITED'], full ? [1000] : [100]),
    busyChannel: Number(process.env['BENCH_BUSY_CHANNEL'] ?? (full ? 50 : 20)),
    singles: full ? 7 : 4,
    idlePresses: full ? 400 : 100,
    timeoutMs: full ? 20 * 60_000 : 150_000,
    cpuProfile: process.env['BENCH_CPU_PROFILE'] === '1',
    poolMax: Number(process.env['BENCH_DB_POOL_SIZE']) > 0 ? Number(process.env['BENCH_DB_POOL_SIZE']) : undefined,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

/** Runs sections 5 and 6; returns their Markdown and one raw row per load level and press series. */
export async function benchConcurrency(
  profile: 'quick' | 'full',
): Promise<{ markdown: string[]; rows: Record<string, unknown>[] }> {
  const s = settingsFor(profile);
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-load-'));
  const auditLog = join(dir, 'audit.jsonl');
  const peers = await startSlackPeers({ rateLimits: true });
  const tracker = new RunTracker();
  let app: SlackSteward | undefined;
  try {
    app = await startSlackSteward({ peers, auditLog, hooks: tracker.hooks, poolMax: s.poolMax });
    const c: LoadContext = { peers, app, tracker, auditLog };
    await startProbe(c);
    // Warm-up (JIT, pool connections, caches), not reported.
    await peers.setRateLimits(false);
    await runLevel(c, 30, 'WARM', { limits: false, timeoutMs: 60_000 });
    await peers.setRateLimits(true);
    const singles: LevelRow[] = [];
    for (let i = 0; i < s.singles; i++)
      singles.push(await runLevel(c, 1, `ONE${i}`, { limits: true, timeoutMs: 30_000 }));
    const base = {
      runMs: median(singles.slice(1).map((r) => r.runP50Ms)),
      engineMs: median(singles.slice(1).map((r) => r.engineP50Ms)),
    };
    const idle = await pressAcks(c, { presses: s.idlePresses, everyMs: PRESS_EVERY_MS, gcWindows: [] });
    const levels: LevelRow[] = [];
    const saturated: { when: string; acks: PressAcks }[] = [];
    const largest = Math.max(...s.levels);
    for (const n of s.levels) {
      const press = n === largest;
      const row = await runLevel(c, n, `N${n}L`, { limits: true, timeoutMs: s.timeoutMs, press });
      levels.push(row);
      if (row.presses) saturated.push({ when: `during ${n} runs of section 5, Slack limits on`, acks: row.presses });
    }
    for (const n of s.unlimited) {
      await peers.setRateLimits(false);
      const row = await runLevel(c, n, `N${n}U`, {
        limits: false,
        timeoutMs: s.timeoutMs,
        press: n === Math.max(...s.unlimited),
      });
      levels.push(row);
      if (row.presses)
        saturated.push({
          when: `during ${n} runs of section 5, Slack limits off: Steward's CPU is the bottleneck`,
          acks: row.presses,
        });
      await peers.setRateLimits(true);
    }
    if (s.busyChannel > 0)
      levels.push(
        await runLevel(c, s.busyChannel, `B${s.busyChannel}L`, {
          limits: true,
          timeoutMs: s.timeoutMs,
          oneChannel: true,
          quiet: QUIET_RUNS,
        }),
      );
    const profiled = s.cpuProfile ? await profileLevel(c, largest, s.timeoutMs) : [];
    const dups = await duplicates(c);
    const rows: Record<string, unknown>[] = [
      ...singles.map((r) => ({ section: 'concurrency', single: true, ...r })),
      ...levels.map((r) => ({ section: 'concurrency', ...r, base })),
      { section: 'button-ack', when: 'idle', ...idle },
      ...saturated.map((x) => ({ section: 'button-ack', when: x.when, ...x.acks })),
      { section: 'duplicates', ...dups },
    ];
    return {
      markdown: [
        ...renderConcurrency(levels, base, {
          gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
          poolMax: app.poolMax,
        }),
        ...profiled,
        '',
        ...buttonSection(idle, saturated, dups),
      ],
      rows,
    };
  } finally {
    await app?.close();
    await peers.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts the probe run (requester U0PROBE) and waits until its card offers Pause. */
async function startProbe(c: LoadContext): Promise<void> {
  c.tracker.watch(PROBE_CHANNEL);
  await c.peers.script(PROBE_PLAN, 'Probe stopped.');
  await c.peers.mentions([{ channel: PROBE_CHANNEL, user: 'U0PROBE', text: 'probe' }]);
  if (!(await until(() => c.tracker.of(PROBE_CHANNEL)[0]?.card !== undefined, 30_000)))
    throw new Error('the probe run did not start');
  await c.peers.script(LOAD_PLAN, LOAD_REPORT);
}

/**
 * Starts `n` runs at once (channels `C0<label>X0000`…, or all in `C0<label>X` with `oneChannel`; one requester each)
 * and measures them until all settle.
 */
async function runLevel(
  c: LoadContext,
  n: number,
  label: string,
  o: { limits: boolean; timeoutMs: number; press?: boolean; oneChannel?: boolean; quiet?: number },
): Promise<LevelRow> {
  const prefix = `C0${label}X`;
  const quietPrefix = `C0${label}Q`;
  c.tracker.watch(prefix);
  c.tracker.watch(quietPrefix);
  await c.peers.resetRateLimits();
  const marks = { ...c.app.logs, first: c.app.logs.first.length };
  c.app.poolStats.reset();
  const baseline = heapAfterGc();
  const sampler = startSampling({
    baseline,
    inFlight: () => c.tracker.inFlight(prefix),
    waiting: () => c.app.pool.waitingCount,
    now: epochNow,
  });
  if (o.press)
    await c.peers.startPressing({ everyMs: PRESS_EVERY_MS, action: 'pause', user: 'U0BOB', prefix: PROBE_CHANNEL });
  const specs = Array.from({ length: n }, (_, i) => ({
    channel: o.oneChannel ? prefix : `${prefix}${String(i).padStart(4, '0')}`,
    user: `U0L${String(i).padStart(4, '0')}`,
    text: 'sleep three times',
  }));
  const acked = c.peers.mentions(specs);
  const quiet = o.quiet ?? 0;
  if (quiet > 0) {
    // Once the busy channel's cards fill its lane, a run in each of a few quiet channels.
    await until(() => c.tracker.of(prefix).some((r) => r.card !== undefined), o.timeoutMs);
    await c.peers.mentions(
      Array.from({ length: quiet }, (_, i) => ({
        channel: `${quietPrefix}${String(i).padStart(4, '0')}`,
        user: `U0Q${String(i).padStart(4, '0')}`,
        text: 'sleep three times',
      })),
    );
  }
  const complete =
    (await until(() => c.tracker.settled(prefix) >= n, o.timeoutMs)) &&
    (await until(() => c.tracker.settled(quietPrefix) >= quiet, o.timeoutMs));
  const samples = sampler.stop();
  // The presses cover the runs, not the wait for the last card updates below.
  const presses = o.press ? await pressAcks(c, { stopOnly: true, gcWindows: samples.gcWindows }) : undefined;
  const reportedAt = performance.now();
  const final = await untilCardsFinal(c, prefix, o.timeoutMs);
  const finalAfterS = (performance.now() - reportedAt) / 1000;
  const mentionAcks = (await acked).map((a) => a.ackMs);
  await sleep(200);
  const retainedPerRun = (heapAfterGc() - baseline) / n;
  const runs = c.tracker.of(prefix);
  const statuses = await c.app.db.db
    .selectFrom('runs')
    .select(['status'])
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('conversation_key', 'like', `${prefix}%`)
    .groupBy('status')
    .execute();
  const slack = await c.peers.stats(prefix);
  const logs = c.app.logs;
  const pool = c.app.poolStats;
  const timing = runFigures(runs);
  // A card's post wait in a channel of its own (each run's channel, or the quiet runs beside the busy channel).
  const alone = o.oneChannel ? c.tracker.of(quietPrefix) : runs;
  const cardWaits = alone.flatMap((r) =>
    r.card !== undefined && r.cardQueued !== undefined ? [r.card - r.cardQueued] : [],
  );
  return {
    n,
    limits: o.limits,
    oneChannel: o.oneChannel === true,
    complete,
    ...timing,
    cardsPosted: final.posted,
    cardsFinal: final.final,
    finalComplete: final.ok,
    finalAfterS,
    quietRuns: o.oneChannel ? quiet : 0,
    aloneCardWaitP50Ms: median(cardWaits),
    aloneCardWaitMaxMs: cardWaits.length > 0 ? Math.max(...cardWaits) : Number.NaN,
    ...samples,
    retainedPerRunBytes: retainedPerRun,
    poolCheckouts: pool.checkouts,
    poolQueued: pool.queued,
    poolMax: c.app.poolMax,
    poolWaitP50Ms: pool.micros.percentile(50) / 1000,
    poolWaitP99Ms: pool.micros.percentile(99) / 1000,
    poolWaitMaxMs: pool.micros.max / 1000,
    mentionAckP50Ms: median(mentionAcks),
    mentionAckP99Ms: quantile(mentionAcks, 0.99),
    mentionAckMaxMs: Math.max(...mentionAcks),
    mentionAcksOver3s: mentionAcks.filter((x) => x > 3000).length,
    statuses: Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)])),
    reportsDelivered: runs.filter((r) => r.reportOk).length,
    cardsNotPosted: runs.filter((r) => r.cardOk === false).length,
    slackCalls: slack.calls,
    rateLimited: slack.rateLimited,
    cardTitles: slack.cardTitles,
    retries: slack.retries,
    statements: pool.statements,
    cardUpdatesFailed: logs.cardUpdatesFailed - marks.cardUpdatesFailed,
    errors: logs.first
      .slice(marks.first)
      .filter((l) => l.startsWith('error'))
      .slice(0, 5),
    errorCount: logs.errors - marks.errors,
    stepCalls: countCalls(c.auditLog),
    presses,
  };
}

/**
 * Waits until every card posted in the level's channels shows a final state: with reports no longer waiting for
 * the card, the last final updates may still be in the outbox (chat.update is Tier 3 across the workspace).
 */
async function untilCardsFinal(
  c: LoadContext,
  prefix: string,
  timeoutMs: number,
): Promise<{ ok: boolean; posted: number; final: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { cardTitles } = await c.peers.stats(prefix);
    const posted = Object.values(cardTitles).reduce((a, b) => a + b, 0);
    const final = FINAL_TITLES.reduce((a, t) => a + (cardTitles[t] ?? 0), 0);
    if (final >= posted || performance.now() > deadline) return { ok: final >= posted, posted, final };
    await sleep(250);
  }
}

/** Lines the audit server wrote (one per tool call), to check each run made exactly its calls. */
export function countCalls(file: string): number {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"call"')).length;
  } catch {
    return 0;
  }
}

/** The largest level once more under the CPU profiler, Slack limits off (its timings are not reported: profiling slows it). */
async function profileLevel(c: LoadContext, n: number, timeoutMs: number): Promise<string[]> {
  await c.peers.setRateLimits(false);
  const { profile } = await profileCpu(() => runLevel(c, n, `N${n}P`, { limits: false, timeoutMs }), 1000);
  await c.peers.setRateLimits(true);
  return [
    '',
    `CPU profile of Steward's process over ${n} runs once more (Slack limits off): ${(busyMs(profile) / n).toFixed(1)} ms of busy CPU per run. Top self time:`,
    '',
    ...profileTable(topSelf(profile, 12), n, 'per run'),
    '',
    'Inclusive time in src/:',
    '',
    ...profileTable(topInclusive(profile, 12), n, 'per run'),
  ];
}

/**
 * One chaos run (issue 10): N Steward processes on one PostgreSQL, `runs` requests each delivered to a random process,
 * and while they run: a random process SIGKILLed and started again every few seconds, PostgreSQL restarted now and
 * then, Approve pressed on plans that wait for review and Stop on random runs, each through a random process. Then
 * the faults stop, every process is brought back, and the test waits until nothing moves (or a deadline) before it
 * reads the audit log, the fake Slack's records and the database, and tallies them (chaos-tally.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StewardProcess } from '../helpers/steward-process.ts';
import { buttonOf, cardsOf, ephemeralsIn, postsIn, reportsIn } from '../helpers/slack-delivery.ts';
import { startChaosCluster, type ChaosCluster } from './chaos-cluster.ts';
import { requestText, TEMPLATES } from './chaos-plans.ts';
import {
  tallyChaos,
  type AttemptRow,
  type ChaosObservations,
  type ChaosTally,
  type DecisionRow,
  type RunRow,
  type SentRequest,
  type StopPress,
} from './chaos-tally.ts';

export interface ChaosOptions {
  runs: number;
  processes: number;
  /** How long faults are injected; requests go out in the first 60 % of it. */
  seconds: number;
  seed: number;
  /** Mean time between SIGKILLs (a random live process, restarted after `restartDelayMs`); 0: none. */
  killEverySeconds: number;
  restartDelayMs: number;
  /** Time between PostgreSQL restarts (`pg_ctl restart -m fast`); 0: none. */
  pgRestartEverySeconds: number;
  /** Time between chances to press Stop on a random running run (taken half the time); 0: none. */
  stopEverySeconds: number;
  /** How long to wait, after the faults, for every run to settle. */
  settleSeconds: number;
  /** The checkout whose `src/main.ts` runs (default: this one). */
  root?: string;
  /** Where to write each process's output and log (nothing is written when unset). */
  artifactsDir?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** What the faults were, for the printout. */
export interface ChaosEvents {
  kills: number;
  startFailures: number;
  pgRestarts: number;
  approvesPressed: number;
  stopsWithoutButton: number;
  settledAfterMs: number | null;
}

export interface ChaosResult {
  tally: ChaosTally;
  events: ChaosEvents;
  observations: ChaosObservations;
}

export const DEFAULT_CHAOS_OPTIONS: ChaosOptions = {
  runs: 100,
  processes: 3,
  seconds: 120,
  seed: 1,
  killEverySeconds: 4,
  restartDelayMs: 500,
  pgRestartEverySeconds: 15,
  stopEverySeconds: 4,
  settleSeconds: 90,
};

const UNSETTLED = new Set(['planning', 'running', 'stopping', 'awaiting_review']);

/** Runs the whole scenario and returns the tally; every process, server and folder is cleaned up. */
export async function runChaos(options: Partial<ChaosOptions> = {}): Promise<ChaosResult> {
  const o = { ...DEFAULT_CHAOS_OPTIONS, ...options };
  const log = o.log ?? (() => undefined);
  const rand = mulberry32(o.seed);
  const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(rand() * xs.length)];
  const cluster = await startChaosCluster({ processes: o.processes, root: o.root });
  let t0 = Date.now();
  const say = (line: string) => log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  const events: ChaosEvents = {
    kills: 0,
    startFailures: 0,
    pgRestarts: 0,
    approvesPressed: 0,
    stopsWithoutButton: 0,
    settledAfterMs: null,
  };
  const requests: SentRequest[] = [];
  const stops: StopPress[] = [];
  const background = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    const tracked = p.catch((err: unknown) => say(`background task failed: ${String(err)}`));
    background.add(tracked);
    void tracked.finally(() => background.delete(tracked));
  };
  const query = <R>(text: string, params: unknown[] = []) => queryRetrying<R>(cluster, text, params);
  const randomLive = () => pick(cluster.live());
  const startOne = async (p: StewardProcess) => {
    for (let tries = 1; !p.running(); tries++) {
      try {
        await p.start();
        return;
      } catch (err) {
        events.startFailures += 1;
        say(`${p.name} failed to start (try ${tries}): ${String(err).split('\n').slice(0, 3).join(' / ')}`);
        if (tries >= 5) throw err;
        await sleep(1_000);
      }
    }
  };

  try {
    await Promise.all(cluster.processes.map(startOne));
    // The clock of the faults starts once every process listens.
    t0 = Date.now();
    say(`${o.processes} processes listening: ${cluster.processes.map((p) => `${p.name}:${p.port}`).join(', ')}`);
    const endAt = t0 + o.seconds * 1_000;
    const gap = (o.seconds * 600) / Math.max(1, o.runs);
    const templates = Object.keys(TEMPLATES);
    for (let k = 1; k <= o.runs; k++) {
      const template = pick(templates)!;
      const at = t0 + (k - 1) * gap;
      track(
        (async () => {
          await sleep(Math.max(0, at - Date.now()));
          // A person per request: Steward learns from a person's Stops to hold their next plans before the same tools.
          const user = `U0CHAOS${k}`;
          const d = await cluster.delivery.mention(() => randomLive()?.eventsUrl, {
            text: requestText(k, template),
            user,
          });
          requests.push({ k, template, threadTs: d.threadTs, delivered: d.ok });
          if (!d.ok) say(`request #${k} not delivered: ${JSON.stringify(d.tries)}`);
        })(),
      );
    }

    const pressed = new Map<string, number>();
    const approvePass = async () => {
      const rows = await query<RunRow>(
        `SELECT id, status, conversation_key, requester_id FROM runs WHERE status = 'awaiting_review'`,
      );
      for (const r of rows) {
        const card = cardsOf(cluster.slack, threadOf(r.conversation_key))
          .filter((c) => buttonOf(c, 'approve'))
          .at(-1);
        if (!card || Date.now() - (pressed.get(card.ts) ?? 0) < 5_000) continue;
        const via = randomLive();
        if (!via) continue;
        pressed.set(card.ts, Date.now());
        events.approvesPressed += 1;
        await cluster.delivery.press(() => via.eventsUrl, card, 'approve', { user: r.requester_id });
      }
    };
    const stopPass = async () => {
      const rows = await query<RunRow>(
        `SELECT id, status, conversation_key, requester_id FROM runs WHERE status = 'running'`,
      );
      const run = pick(rows.filter((r) => !stops.some((s) => s.runId === r.id)));
      if (!run) return;
      const card = cardsOf(cluster.slack, threadOf(run.conversation_key))
        .filter((c) => buttonOf(c, 'stop'))
        .at(-1);
      if (!card) {
        events.stopsWithoutButton += 1;
        return;
      }
      const via = randomLive();
      if (!via) return;
      const [now] = await query<RunRow>('SELECT status FROM runs WHERE id = $1', [run.id]);
      const at = Date.now();
      const d = await cluster.delivery.press(() => via.eventsUrl, card, 'stop', { user: run.requester_id });
      stops.push({ runId: run.id, at, via: via.name, statusBefore: now?.status ?? '?', delivered: d.ok });
      say(
        `Stop pressed on run ${run.id.slice(0, 8)} (${now?.status}) via ${via.name}: ${d.ok ? 'delivered' : 'failed'}`,
      );
    };

    let nextKill = o.killEverySeconds > 0 ? t0 + o.killEverySeconds * 1_000 * (0.5 + rand()) : Infinity;
    let nextPg = o.pgRestartEverySeconds > 0 ? t0 + o.pgRestartEverySeconds * 1_000 : Infinity;
    let nextStop = o.stopEverySeconds > 0 ? t0 + o.stopEverySeconds * 1_000 : Infinity;
    let pgBusy = false;
    // The passes read the database and press through Slack, which can take seconds while PostgreSQL restarts or the
    // machine is loaded: they run beside the fault clock (one of each at a time), never holding it up, so the
    // kills and restarts keep their schedule (on a loaded machine a blocked loop once went 25 s without a kill).
    const passes = { approve: false, stop: false };
    const beside = (name: keyof typeof passes, pass: () => Promise<void>) => {
      if (passes[name]) return;
      passes[name] = true;
      track(pass().finally(() => (passes[name] = false)));
    };
    while (Date.now() < endAt) {
      beside('approve', approvePass);
      const live = cluster.live();
      if (Date.now() >= nextKill && live.length >= 2) {
        nextKill = Date.now() + o.killEverySeconds * 1_000 * (0.5 + rand());
        const victim = pick(live)!;
        events.kills += 1;
        say(`SIGKILL ${victim.name}`);
        track(
          (async () => {
            await victim.kill('SIGKILL');
            await sleep(o.restartDelayMs);
            await startOne(victim);
            say(`${victim.name} back (start #${victim.starts})`);
          })(),
        );
      }
      if (Date.now() >= nextPg && !pgBusy) {
        nextPg = Date.now() + o.pgRestartEverySeconds * 1_000;
        pgBusy = true;
        events.pgRestarts += 1;
        say('PostgreSQL restart (fast)');
        track(cluster.postgres.restart({ mode: 'fast' }).finally(() => (pgBusy = false)));
      }
      if (Date.now() >= nextStop) {
        nextStop = Date.now() + o.stopEverySeconds * 1_000;
        if (rand() < 0.5) beside('stop', stopPass);
      }
      await sleep(250);
    }

    say('faults over; bringing every process back and waiting for the runs to settle');
    while (background.size > 0) await Promise.all([...background]);
    await cluster.postgres.start();
    for (const p of cluster.processes) if (!p.running()) await startOne(p);
    const settleStart = Date.now();
    let quietSince = Date.now();
    let lastSeen = '';
    while (Date.now() - settleStart < o.settleSeconds * 1_000) {
      await approvePass();
      const rows = await query<RunRow>('SELECT id, status, report_due FROM runs');
      const moving = rows.some((r) => UNSETTLED.has(r.status) || r.report_due);
      const seen = `${cluster.audit().length}/${cluster.slack.calls.length}/${JSON.stringify(rows)}`;
      if (seen !== lastSeen || moving) quietSince = Date.now();
      lastSeen = seen;
      if (!moving && Date.now() - quietSince >= 3_000) {
        events.settledAfterMs = Date.now() - settleStart;
        break;
      }
      await sleep(500);
    }
    say(
      events.settledAfterMs === null
        ? `not settled after ${o.settleSeconds} s`
        : `settled ${(events.settledAfterMs / 1000).toFixed(1)} s after the faults`,
    );

    const observations = await observe(cluster, requests, stops, query);
    if (o.artifactsDir) {
      saveArtifacts(o.artifactsDir, cluster);
      // Each run's stored story (its row and events), to read a failing run's end next to the processes' logs.
      const stored = await query(
        'SELECT id, status, owner, fence, report_due, lease_expires_at FROM runs ORDER BY created_at',
      );
      const events = await query('SELECT run_id, type, payload, created_at FROM run_events ORDER BY id');
      // Decisions as recorded, and the Stops as pressed (with when), to time a Stop against the run's end.
      const decided = observations.decisions;
      const pressed = stops.map((s) => ({ ...s, at: new Date(s.at).toISOString() }));
      writeFileSync(
        join(o.artifactsDir, 'runs.json'),
        JSON.stringify({ runs: stored, events, decisions: decided, stops: pressed }, null, 1),
      );
    }
    return { tally: tallyChaos(observations), events, observations };
  } finally {
    await cluster.close();
  }
}

async function observe(
  cluster: ChaosCluster,
  requests: SentRequest[],
  stops: StopPress[],
  query: <R>(text: string, params?: unknown[]) => Promise<R[]>,
): Promise<ChaosObservations> {
  const runs = await query<RunRow>('SELECT id, status, request, conversation_key, requester_id, report_due FROM runs');
  const attempts = await query<AttemptRow>(
    'SELECT run_id, step_id, attempt, status, args, error, ended_at FROM step_attempts ORDER BY id',
  );
  const decisions = await query<DecisionRow>(
    'SELECT run_id, action, accepted, note, created_at FROM decisions ORDER BY id',
  );
  const threads = [...new Set([...requests.map((q) => q.threadTs), ...runs.map((r) => threadOf(r.conversation_key))])];
  return {
    requests: [...requests].sort((a, b) => a.k - b.k),
    stops,
    audit: cluster.audit(),
    runs,
    attempts,
    decisions,
    reports: new Map(threads.map((t) => [t, reportsIn(cluster.slack, t)])),
    ephemerals: new Map(threads.map((t) => [t, ephemeralsIn(cluster.slack, t)])),
    posts: new Map(threads.map((t) => [t, postsIn(cluster.slack, t)])),
  };
}

// The test's own reads go on through a PostgreSQL restart: a failed query is tried again for up to ~30 s.
async function queryRetrying<R>(cluster: ChaosCluster, text: string, params: unknown[]): Promise<R[]> {
  for (let tries = 1; ; tries++) {
    try {
      return (await cluster.pool.query(text, params)).rows as R[];
    } catch (err) {
      if (tries >= 60) throw err;
      await sleep(500);
    }
  }
}

function saveArtifacts(dir: string, cluster: ChaosCluster): void {
  mkdirSync(dir, { recursive: true });
  for (const p of cluster.processes) {
    writeFileSync(join(dir, `${p.name}.out.txt`), p.output());
    writeFileSync(join(dir, `${p.name}.log`), p.log());
  }
  writeFileSync(
    join(dir, 'audit.jsonl'),
    cluster
      .audit()
      .map((a) => JSON.stringify(a))
      .join('\n'),
  );
  writeFileSync(join(dir, 'slack-calls.json'), JSON.stringify(cluster.slack.calls, null, 1));
}

/** A Slack conversation key is `<channel>:<thread ts>`. */
function threadOf(conversationKey: string): string {
  return conversationKey.slice(conversationKey.indexOf(':') + 1);
}

/** A small seeded generator, so a run's choices can be replayed with the same `--seed`. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

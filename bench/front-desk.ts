/**
 * Section 11 (`BENCH_ONLY=frontdesk`): Steward with the settings a person gets from the README (quick answers on) on
 * tools an operator declared read-only and closed-world, the common case, where every request first meets the front
 * desk. Side by side in one run, interleaved in rotated order after a warm-up: the planner asked beside the front
 * desk (the default), the planner asked only once the front desk hands over (`after`, as before issue 31), quick
 * answers off, and LangGraph's agent (bench/peer-langgraph), against the same fake model process, latency model and
 * MCP servers as section 1b. The bench's front desk model does what Steward's instructions ask: it answers lookups
 * that need no dependent steps with parallel tool calls, and hands anything with dependent steps to the planner.
 * Time is from the message to the text the person gets; tokens are every model call the fake model received for the
 * run, dropped calls included (counted where they arrive, as a provider bills them). Steward's own time is read from
 * what its Stewards tell of their calls (bench/run-spans.ts): the wall time less the time a call was in flight.
 */
import { Steward } from '../src/engine/flows/steward.ts';
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier } from '../src/engine/ports.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { connectPeer, defaultMaxParallel } from './against-peer.ts';
import { taskTag } from './fake-model.ts';
import { PEER_LATENCY, PEER_TOOL_MS } from './latency-model.ts';
import type { PeerAgent } from './peer.ts';
import { benchSettings } from './profile.ts';
import { askAndWait, declaredReadOnly } from './quick-answers.ts';
import { header, int, median, row } from './stats.ts';
import type { BenchTask } from './tasks.ts';
import { flooredTools } from './timeline.ts';
import type { World } from './world.ts';
import { ALL_CALLS, inFlightMs, QUICK_CALLS, quickPhases, RecordingTelemetry } from './run-spans.ts';

const STEWARD_PATHS = ['beside', 'after', 'off'] as const;
type StewardPath = (typeof STEWARD_PATHS)[number];
type Path = StewardPath | 'langgraph';
/** The shapes the issue measured, and the widest fan-out. */
const SHAPES = ['single', 'fan-8', 'fan-16', 'chain-4'] as const;

/** One measured request. */
export interface FrontDeskRow {
  section: 'front-desk';
  path: Path;
  task: string;
  shape: string;
  round: number;
  wallMs: number;
  correct: boolean;
  inputTokens: number;
  outputTokens: number;
  modelCalls: number;
  roles: string;
  /**
   * Steward's own time on a request the front desk answered: the wall time less its front desk calls' modelled
   * latency and each round of calls between them (the tool floor, or the longest wait asked for; the dropped planner
   * call runs beside, off the path). Undefined on other requests and for the peer.
   */
  ownMs?: number;
  /**
   * Steward's own time from its telemetry: the wall time less the time one of the run's calls was in flight. On a
   * request the front desk answered, its butler calls and its rounds' tool calls (the planner call beside is off the
   * path); on a planned run, every call. Undefined for the peer.
   */
  spanOwnMs?: number;
  /** How the request was answered: by the front desk, or by a plan (Steward only). */
  route?: 'quick' | 'plan';
  /** The front desk's model calls the run told of (its turns). */
  deskTurns?: number;
  /** Where a quick answer's own time went (`quickPhases`), for the rows file. */
  phases?: Record<string, number>;
}

/** Runs the section; without the peer (it could not be installed) its column says why. */
export async function benchFrontDesk(
  world: World,
  options: { rounds: number; scale: number; onRow: (r: FrontDeskRow) => void; log: (line: string) => void },
): Promise<{ rows: FrontDeskRow[]; markdown: string[] }> {
  const toolFloorMs = PEER_TOOL_MS * options.scale;
  const maxParallel = defaultMaxParallel();
  const waiters = new Map<string, (m: OutboundMessage) => void>();
  const notifier: Notifier = { send: async (c, m) => waiters.get(c.key)?.(m) };
  const base = benchSettings(maxParallel);
  const telemetry = new RecordingTelemetry();
  const deps = {
    telemetry,
    llm: world.llm,
    tools: declaredReadOnly(flooredTools(world.host, toolFloorMs)),
    store: new PgRunStore(world.db.db),
    notifier,
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
    log: () => undefined,
  };
  // The README's quick-answer settings (STEWARD_QUICK_MAX_TURNS 4, STEWARD_QUICK_MAX_TOKENS 12000).
  const quick = (frontDesk: 'beside' | 'after') => ({ maxTurns: 4, maxTokens: 12_000, frontDesk });
  const stewards: Record<StewardPath, Steward> = {
    beside: new Steward({ ...deps, settings: { ...base, quickAnswers: quick('beside') } }),
    after: new Steward({ ...deps, settings: { ...base, quickAnswers: quick('after') } }),
    off: new Steward({ ...deps, settings: base }),
  };
  const connected = await connectPeer(world, toolFloorMs, options.log);
  const peer = connected.ok ? connected.peer : undefined;
  const paths: Path[] = [...STEWARD_PATHS, ...(peer ? (['langgraph'] as const) : [])];
  const tasks = world.tasks.filter((t) => (SHAPES as readonly string[]).includes(t.shape));
  const rows: FrontDeskRow[] = [];
  const one = (task: BenchTask, path: Path, round: number) =>
    path === 'langgraph'
      ? runPeer(world, peer!, task, round)
      : runSteward(world, toolFloorMs, stewards[path], path, task, round, waiters, telemetry);
  try {
    await world.fake.configure({ ...world.fakeConfig, latency: PEER_LATENCY });
    await world.fake.flush();
    for (const task of tasks.slice(0, 2)) for (const path of paths) await one(task, path, 0);
    for (let round = 1; round <= options.rounds; round++) {
      for (const [i, task] of tasks.entries()) {
        // Rotated so each path goes first in turn, and reversed every other round so each follows each: a request
        // right after LangGraph's (same process) waits on its leftovers, 4 to 8 ms more before its first call.
        for (const path of rotate(round % 2 === 0 ? paths : [...paths].reverse(), i + round)) {
          const r = await one(task, path, round);
          rows.push(r);
          options.onRow(r);
        }
      }
      options.log(`front desk: round ${round} of ${options.rounds}`);
    }
  } finally {
    await Promise.all(Object.values(stewards).map((s) => s.shutdown()));
    await peer?.close();
    await world.fake.configure(world.fakeConfig);
    telemetry.clear();
  }
  const why = connected.ok ? undefined : connected.why;
  return { rows, markdown: render(rows, tasks, options, why) };
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function runSteward(
  world: World,
  toolFloorMs: number,
  steward: Steward,
  path: StewardPath,
  task: BenchTask,
  round: number,
  waiters: Map<string, (m: OutboundMessage) => void>,
  telemetry: RecordingTelemetry,
): Promise<FrontDeskRow> {
  const key = `frontdesk-${path}-${task.id}-${round}-${crypto.randomUUID()}`;
  const startMs = Date.now();
  const end = await askAndWait(steward, key, `${taskTag(task.id, round)} ${task.request}`, waiters);
  const run = await world.db.db
    .selectFrom('runs')
    .select('id')
    .where('conversation_key', '=', key)
    .executeTakeFirstOrThrow();
  const spans = telemetry.take(run.id);
  const deskTurns = spans.models.filter((c) => c.role === 'butler').length;
  const row = await measured(world, path, task, round, end.wallMs, end.text, toolFloorMs);
  const route = row.ownMs !== undefined ? 'quick' : 'plan';
  const spanOwnMs = end.wallMs - inFlightMs(spans, route === 'quick' ? QUICK_CALLS : ALL_CALLS);
  const phases = route === 'quick' ? { phases: quickPhases(spans, startMs, startMs + end.wallMs) } : {};
  return { ...row, route, deskTurns, spanOwnMs, ...phases };
}

async function runPeer(world: World, peer: PeerAgent, task: BenchTask, round: number): Promise<FrontDeskRow> {
  const t0 = performance.now();
  const out = await peer.run(`${taskTag(task.id, round)} ${task.request}`);
  return measured(world, 'langgraph', task, round, performance.now() - t0, out.answer, 0);
}

/** The row, with the model calls the fake received since the last one (a dropped call lands before the next run). */
async function measured(
  world: World,
  path: Path,
  task: BenchTask,
  round: number,
  wallMs: number,
  text: string | null,
  toolFloorMs: number,
): Promise<FrontDeskRow> {
  const { calls } = await world.fake.flush();
  const mine = calls.filter((c) => c.taskId === task.id && c.round === round);
  const desk = mine.filter((c) => c.role === 'butler');
  const answered = path !== 'langgraph' && desk.length > 0 && !mine.some((c) => c.role === 'synthesizer');
  // Each round of calls between two turns takes its slowest call: the floor, or a wait asked for that is longer.
  const roundMs = Math.max(toolFloorMs, ...task.steps.map((st) => st.nominalMs));
  const deskMs = desk.reduce((n, c) => n + c.latencyMs, 0) + roundMs * (desk.length - 1);
  return {
    section: 'front-desk',
    path,
    task: task.id,
    shape: task.shape,
    round,
    wallMs,
    correct: text?.includes(task.expected) ?? false,
    inputTokens: mine.reduce((n, c) => n + c.inputTokens, 0),
    outputTokens: mine.reduce((n, c) => n + c.outputTokens, 0),
    modelCalls: mine.length,
    roles: mine.map((c) => c.role).join(' '),
    ...(answered && { ownMs: wallMs - deskMs }),
  };
}

function render(
  rows: readonly FrontDeskRow[],
  tasks: readonly BenchTask[],
  options: { rounds: number; scale: number },
  peerMissing: string | undefined,
): string[] {
  const lines = [
    '#### 11. The front desk, with the README defaults, on read-only closed-world tools',
    '',
    `${tasks.length} tasks (${SHAPES.join(', ')}) × ${options.rounds} rounds per path, interleaved, latency scale ${options.scale}.`,
    'beside: quick answers on, the planner asked beside the front desk (the default); after: the planner asked once',
    'the front desk hands over (before issue 31); off: STEWARD_QUICK_ANSWERS=off. Tokens count every call the model',
    'received, dropped ones included. Ratios are Steward ÷ LangGraph on medians. Own time (spans): the wall time less',
    "the time one of the run's model or tool calls was in flight, as Steward told of them (bench/run-spans.ts); per",
    'front desk turn on requests it answered (its planner call beside, dropped, not counted), and per whole run on',
    'planned requests (runs counted in brackets). Own time (modelled): the wall time less the modelled latencies,',
    "so it also holds the fake model's and the servers' round trips, which the spans count as in flight.",
    ...(peerMissing ? ['', peerMissing] : []),
    '',
    ...header([
      'Shape',
      'Path',
      'Runs',
      'Correct',
      'Median ms',
      'Tokens (median)',
      'Model calls',
      '÷ peer (time)',
      'Own ms per quick turn (modelled)',
      'Own ms per quick turn (spans)',
      'Own ms per planned run (spans)',
    ]),
  ];
  for (const shape of SHAPES) {
    const peer = rows.filter((r) => r.shape === shape && r.path === 'langgraph');
    const peerMs = peer.length > 0 ? median(peer.map((r) => r.wallMs)) : NaN;
    for (const path of [...STEWARD_PATHS, 'langgraph'] as const) {
      const mine = rows.filter((r) => r.shape === shape && r.path === path);
      if (mine.length === 0) continue;
      const ms = median(mine.map((r) => r.wallMs));
      lines.push(
        row([
          shape,
          path,
          mine.length,
          `${mine.filter((r) => r.correct).length}/${mine.length}`,
          int(ms),
          int(median(mine.map((r) => r.inputTokens + r.outputTokens))),
          int(median(mine.map((r) => r.modelCalls))),
          Number.isFinite(peerMs) && path !== 'langgraph' ? (ms / peerMs).toFixed(2) : '',
          ownPerTurn(mine),
          spanOwnPerTurn(mine),
          spanOwnPerRun(mine),
        ]),
      );
    }
  }
  return lines;
}

/**
 * The median of Steward's own time per front desk turn, over the requests the front desk answered, as estimated
 * before the spans: kept beside them because the gap between the two is what the fake model and the servers add
 * (HTTP round trips, their own work) on top of the latency model.
 */
function ownPerTurn(rows: readonly FrontDeskRow[]): string {
  const own = rows.flatMap((r) =>
    r.ownMs === undefined ? [] : [r.ownMs / r.roles.split(' ').filter((x) => x === 'butler').length],
  );
  return own.length > 0 ? int(median(own)) : '';
}

/** The median of Steward's own time per front desk turn from its spans, over the requests the front desk answered. */
function spanOwnPerTurn(rows: readonly FrontDeskRow[]): string {
  const own = rows.flatMap((r) =>
    r.route === 'quick' && r.spanOwnMs !== undefined && r.deskTurns ? [r.spanOwnMs / r.deskTurns] : [],
  );
  return own.length > 0 ? own1(median(own)) : '';
}

/** The median of Steward's own time per planned run from its spans (every call of the run counted as in flight). */
function spanOwnPerRun(rows: readonly FrontDeskRow[]): string {
  const own = rows.flatMap((r) => (r.route === 'plan' && r.spanOwnMs !== undefined ? [r.spanOwnMs] : []));
  return own.length > 0 ? `${own1(median(own))} (${own.length})` : '';
}

function own1(ms: number): string {
  return ms.toFixed(1);
}

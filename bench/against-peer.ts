/**
 * The comparison against the agent users would otherwise pick: Steward (its default settings, PostgreSQL) against
 * LangGraph's `createAgent` (bench/peer-langgraph), in the same run, against the same fake model process, the same
 * MCP servers and issue 13's latency model (400 ms + 0.05 ms per input token + 5 ms per output token; every tool
 * call at least 500 ms; all scaled). Tasks and the two sides are interleaved in rotated order after a warm-up pass.
 */
import { loadConfig } from '../src/config.ts';
import { PEER_MARKER, taskTag } from './fake-model.ts';
import { PEER_LATENCY, PEER_TOOL_MS } from './latency-model.ts';
import { ModeRunner } from './mode-runner.ts';
import { loadPeer, type PeerAgent } from './peer.ts';
import { stepOfCall } from './peer-model.ts';
import { analyseRun, type RunRow } from './run-analysis.ts';
import type { BenchTask } from './tasks.ts';
import type { World } from './world.ts';

/** The two sides compared. */
export const PEER_MODES = ['plan-execute', 'langgraph'] as const;
type PeerMode = (typeof PEER_MODES)[number];

/** What the comparison measured, or why it was left out. */
export interface PeerSection {
  rows: RunRow[];
  /** Set when the peer could not be installed or loaded. */
  skipped?: string;
  versions: string;
  /** Tools both sides were given. */
  toolCount: number;
  toolFloorMs: number;
  maxParallel: number;
}

const WARM_UP = ['single-echo', 'single-sum-http', 'fan16-sum', 'chain3-echo-http', 'large-checksum-1'];

/** The peer's system prompt: the marker the fake reads, then what a user of createAgent typically writes. */
const SYSTEM_PROMPT = `${PEER_MARKER}
You are a helpful assistant. Use the tools to do what the person asks. Call tools that do not depend on each other in parallel. When you are done, answer briefly.`;

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** Steward's default parallelism, as a fresh install runs (read from its config, so a new default shows here). */
export function defaultMaxParallel(): number {
  return loadConfig({ OPENAI_API_KEY: 'bench', STEWARD_MODEL: 'bench-model' }).settings.maxParallel;
}

/** Runs the comparison; a peer that cannot be installed leaves it out with the reason. */
export async function benchAgainstPeer(
  world: World,
  options: { rounds: number; scale: number; onRow: (row: RunRow) => void; log: (line: string) => void },
): Promise<PeerSection> {
  const toolFloorMs = PEER_TOOL_MS * options.scale;
  const maxParallel = defaultMaxParallel();
  const base = { rows: [], versions: '', toolCount: 0, toolFloorMs, maxParallel };
  const connected = await connectPeer(world, toolFloorMs, options.log);
  if (!connected.ok) {
    options.log(connected.why);
    return { ...base, skipped: connected.why };
  }
  const { peer, versions } = connected;
  const runner = new ModeRunner(world, { maxParallel, toolFloorMs });
  const rows: RunRow[] = [];
  const one = (task: BenchTask, mode: PeerMode, round: number, key: string) =>
    runOne({ world, runner, peer, toolFloorMs, maxParallel }, task, mode, round, key);
  try {
    await world.fake.configure({ ...world.fakeConfig, latency: PEER_LATENCY });
    await world.fake.flush();
    for (const task of world.tasks.filter((t) => WARM_UP.includes(t.id)))
      for (const mode of PEER_MODES) await one(task, mode, 0, `peer-warm:${task.id}:${mode}`);
    for (let round = 1; round <= options.rounds; round++) {
      const started = performance.now();
      const tasks = rotate(world.tasks, round * 5);
      for (const [i, task] of tasks.entries()) {
        for (const mode of rotate(PEER_MODES, i + round)) {
          const row = await one(task, mode, round, `peer:${task.id}:${mode}:${round}`);
          rows.push(row);
          options.onRow(row);
        }
      }
      options.log(
        `against LangGraph, round ${round}/${options.rounds}: ${tasks.length * 2} runs in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    }
    return { ...base, rows, versions, toolCount: peer.toolCount };
  } finally {
    await runner.shutdown();
    await peer.close();
    await world.fake.configure(world.fakeConfig);
  }
}

/** Installs, loads and connects the peer with the tools Steward's planner may use; or says why it could not. */
export async function connectPeer(
  world: World,
  toolFloorMs: number,
  log: (line: string) => void,
): Promise<{ ok: true; peer: PeerAgent; versions: string } | { ok: false; why: string }> {
  const loaded = await loadPeer(log);
  if (!loaded.ok) return loaded;
  const allowedTools = world.host
    .listTools()
    .filter((t) => t.policy.allowed)
    .map((t) => t.name);
  try {
    const peer = await loaded.createPeer({
      baseURL: world.fake.baseURL,
      model: 'bench-model',
      servers: world.servers.map((s) => ({ name: s.name, transport: s.transport })),
      allowedTools,
      toolFloorMs,
      systemPrompt: SYSTEM_PROMPT,
    });
    return { ok: true, peer, versions: loaded.versions };
  } catch (err) {
    return {
      ok: false,
      why: `The LangGraph peer could not connect to the MCP servers (${String(err)}), so the comparison against it was left out.`,
    };
  }
}

async function runOne(
  ctx: { world: World; runner: ModeRunner; peer: PeerAgent; toolFloorMs: number; maxParallel: number },
  task: BenchTask,
  mode: PeerMode,
  round: number,
  key: string,
): Promise<RunRow> {
  const run =
    mode === 'plan-execute' ? await ctx.runner.run(mode, task, round, key) : await runPeer(ctx.peer, task, round);
  const { calls, failures } = await ctx.world.fake.flush();
  const analysed = analyseRun(task, mode, round, run, calls, ctx);
  const row: RunRow = { ...analysed, section: 'peer' };
  if (failures.length > 0) row.status += `; fake LLM: ${failures.join('; ')}`;
  return row;
}

async function runPeer(peer: PeerAgent, task: BenchTask, round: number) {
  const t0 = performance.now();
  const out = await peer.run(`${taskTag(task.id, round)} ${task.request}`);
  const callsPerTurn = out.callsPerTurn.map((ids) => ids.map(stepOfCall));
  return {
    wallMs: performance.now() - t0,
    answer: out.answer,
    status: out.error ?? 'completed',
    t0,
    spans: [],
    react: { answer: out.answer, turns: callsPerTurn.length + 1, toolCalls: out.toolCalls, callsPerTurn },
  };
}

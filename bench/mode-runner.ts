/**
 * Runs one task in one mode and returns what happened with its timeline. Plan-execute goes through the real
 * `Steward` (planner call, auto-approved low-risk plan, dispatcher, report) on PostgreSQL; the ReAct modes go
 * through the same LLM client and MCP host. Each port is wrapped by a timing recorder.
 */
import { DEFAULT_MAX_PARALLEL } from '../src/config.ts';
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier } from '../src/engine/ports.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { taskTag } from './fake-model.ts';
import { benchSettings } from './profile.ts';
import { runReact, type ReactOutcome } from './react.ts';
import type { BenchTask } from './tasks.ts';
import { flooredTools, Timeline, timedLlm, timedStore, timedTools, type Span } from './timeline.ts';
import type { World } from './world.ts';

/**
 * The execution styles compared against the analytic limit. The hand-written ReAct loop with parallel calls was
 * dropped: the LangGraph peer (against-peer.ts) is the real agent of that kind, with native parallel tool calls.
 */
export const MODES = ['plan-execute', 'plan-execute-seq', 'react'] as const;
export type Mode = (typeof MODES)[number];

/** One run as observed from outside. */
export interface ModeRun {
  wallMs: number;
  answer: string | null;
  status: string;
  t0: number;
  spans: Span[];
  react?: ReactOutcome;
}

const RUN_TIMEOUT_MS = 300_000;
/** Enough for the widest task (16 steps) to run at once: Steward's default. */
export const BENCH_MAX_PARALLEL = DEFAULT_MAX_PARALLEL;

/** Holds the two Stewards (parallel and sequential) and runs tasks through any mode. */
export class ModeRunner {
  readonly timeline = new Timeline();
  private readonly waiters = new Map<string, (m: OutboundMessage) => void>();
  private readonly stewards: Record<'plan-execute' | 'plan-execute-seq', Steward>;

  /**
   * `maxParallel` is the parallel Steward's (the bench's 16 by default); `toolFloorMs` holds every tool result until
   * that long after its call started, for a modelled tool time.
   */
  constructor(
    private readonly world: World,
    options: { maxParallel?: number; toolFloorMs?: number } = {},
  ) {
    const notifier: Notifier = { send: async (c, m) => this.waiters.get(c.key)?.(m) };
    const tools = options.toolFloorMs ? flooredTools(world.host, options.toolFloorMs) : world.host;
    const base = benchSettings(options.maxParallel ?? BENCH_MAX_PARALLEL);
    const deps = {
      llm: timedLlm(world.llm, this.timeline),
      tools: timedTools(tools, this.timeline),
      store: timedStore(new PgRunStore(world.db.db), this.timeline),
      notifier,
      clock: () => new Date(),
      newId: () => crypto.randomUUID(),
      log: () => undefined,
    };
    this.stewards = {
      'plan-execute': new Steward({ ...deps, settings: base }),
      'plan-execute-seq': new Steward({ ...deps, settings: { ...base, maxParallel: 1 } }),
    };
  }

  /** Runs `task` in `mode`; the conversation key is unique per call. */
  async run(mode: Mode, task: BenchTask, round: number, key: string): Promise<ModeRun> {
    this.timeline.reset();
    const request = `${taskTag(task.id, round)} ${task.request}`;
    if (mode === 'react') {
      const t0 = performance.now();
      const react = await runReact(
        { llm: timedLlm(this.world.llm, this.timeline), tools: timedTools(this.world.host, this.timeline) },
        request,
        { parallel: false, maxTurns: 40, toolTimeoutMs: 60_000 },
      );
      return {
        wallMs: performance.now() - t0,
        answer: react.answer,
        status: react.error ?? 'completed',
        t0,
        spans: this.timeline.spans,
        react,
      };
    }
    const steward = this.stewards[mode];
    const ended = new Promise<{ text: string | null; status: string; at: number }>((resolve) => {
      this.waiters.set(key, (m) => {
        const at = performance.now();
        if (m.kind === 'report') resolve({ text: m.text, status: m.status, at });
        else if (m.kind === 'answer') resolve({ text: m.text, status: 'answered without tools', at });
        else if (m.kind === 'notice' && m.level === 'error') resolve({ text: null, status: `error: ${m.text}`, at });
      });
    });
    const t0 = performance.now();
    await steward.message({
      conversation: { channel: 'bench', key },
      actor: { id: 'bench', channel: 'bench' },
      text: request,
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(
          () => reject(new Error(`${task.id} ${mode}: no report within ${RUN_TIMEOUT_MS} ms`)),
          RUN_TIMEOUT_MS,
        )),
    );
    try {
      const end = await Promise.race([ended, timeout]);
      await steward.idle();
      return { wallMs: end.at - t0, answer: end.text, status: end.status, t0, spans: this.timeline.spans };
    } finally {
      clearTimeout(timer);
      this.waiters.delete(key);
    }
  }

  /** Lets go of both Stewards' timers. */
  async shutdown(): Promise<void> {
    await Promise.all(Object.values(this.stewards).map((s) => s.shutdown()));
  }
}

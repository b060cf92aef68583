/**
 * Bench profiles. Quick (the default) compresses model and tool latencies to a fifth and runs two rounds, to finish
 * in under 5 minutes on 2 cores; full (`--full` or BENCH_PROFILE=full) runs at scale 1 with more rounds. Fixed
 * costs (store commits, HTTP, MCP round trips) do not compress, so quick is the harsher test of Steward's overhead.
 * Environment overrides: BENCH_SCALE, BENCH_SEED, BENCH_ROUNDS (ReAct comparison), BENCH_OVERHEAD_ROUNDS,
 * BENCH_STEER_ROUNDS.
 */

import type { StewardSettings } from '../src/engine/flows/steward.ts';

/** Settings of one bench run. */
export interface BenchProfile {
  name: 'quick' | 'full';
  /** Latency scale of the fake LLM and the tools' sleeps (1 ≈ a 2 s planner call). */
  scale: number;
  seed: number;
  /** Measured rounds of the ReAct comparison (after a warm-up pass). */
  rounds: number;
  /** Measured rounds of the dispatcher-overhead runs (after a warm-up round). */
  overheadRounds: number;
  steeringRounds: number;
  /** The 429 run: 1 request in `every` refused once, with this Retry-After (already scaled). */
  rateLimit: { every: number; retryAfterMs: number; taskIds: string[] };
}

function numberFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

/** Reads the profile from the command line and environment. */
export function readProfile(argv: readonly string[], env: NodeJS.ProcessEnv): BenchProfile {
  const full = argv.includes('--full') || env['BENCH_PROFILE'] === 'full';
  const base = full
    ? { name: 'full' as const, scale: 1, rounds: 5, overheadRounds: 15, steeringRounds: 60 }
    : { name: 'quick' as const, scale: 0.2, rounds: 2, overheadRounds: 5, steeringRounds: 20 };
  const scale = numberFrom(env, 'BENCH_SCALE', base.scale);
  return {
    name: base.name,
    scale,
    seed: numberFrom(env, 'BENCH_SEED', 20261130),
    rounds: Math.round(numberFrom(env, 'BENCH_ROUNDS', base.rounds)),
    overheadRounds: Math.round(numberFrom(env, 'BENCH_OVERHEAD_ROUNDS', base.overheadRounds)),
    steeringRounds: Math.round(numberFrom(env, 'BENCH_STEER_ROUNDS', base.steeringRounds)),
    rateLimit: {
      every: 3,
      retryAfterMs: Math.round(1000 * scale),
      taskIds: ['single-echo', 'fan4-sum-http', 'chain3-sleep', 'fan8-echo'],
    },
  };
}

/**
 * Token budgets the bench's Stewards run with: explicit and far above any task's use, so no bench run is refused for
 * tokens whatever the defaults become. (An earlier default, Number.MAX_SAFE_INTEGER, was refused by PostgreSQL as an
 * integer; this constant kept the bench running then.)
 */
export const BENCH_BUDGETS = { perRun: 1_000_000_000, perUserPerDay: 2_000_000_000 };

/** The settings the bench's own Stewards run with, beside `maxParallel` and what a section adds. */
export function benchSettings(maxParallel: number): StewardSettings {
  return {
    maxParallel,
    maxAttempts: 3,
    amendmentCap: 3,
    maxRepairs: 2,
    reviewTimeoutMs: 600_000,
    budgets: BENCH_BUDGETS,
  };
}

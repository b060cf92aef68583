/**
 * The fake LLM's latency model: time to first token (a fixed part plus prefill of the input tokens), then output
 * tokens at a fixed rate, times a seeded jitter, times a scale factor. Scale 1 makes a planner call for an 8-step
 * plan take about 2 s; the quick profile compresses time with a smaller scale (fixed costs do not compress).
 * Jitter is a function of the seed and the request body only, so a run's latencies do not depend on the order or
 * concurrency of requests: same seed, same request, same latency.
 */
import { createHash } from 'node:crypto';

/** Parameters of the model; times are for scale 1. */
export interface LatencyModel {
  /** Fixed part of the time to first token (queueing, network, first decode step). */
  ttftMs: number;
  /** Prefill speed: input tokens read per second before the first token. */
  prefillTokensPerSec: number;
  /** Decode speed: output tokens written per second. */
  outputTokensPerSec: number;
  /** Sigma of the log-normal jitter (mean 1). */
  jitter: number;
  /** 0..1 (or more): multiplies every latency. */
  scale: number;
  seed: number;
}

/** Calibrated so that an 8-step plan (~2,900 input tokens, ~370 output tokens) takes about 2 s at scale 1. */
export const DEFAULT_LATENCY: Omit<LatencyModel, 'scale' | 'seed'> = {
  ttftMs: 250,
  prefillTokensPerSec: 20_000,
  outputTokensPerSec: 230,
  jitter: 0.08,
};

/**
 * Issue 13's model for the comparison against the LangGraph peer: 400 ms + 0.05 ms per input token + 5 ms per output
 * token, no jitter (the issue gives none; both sides then meet the same latency for the same tokens).
 */
export const PEER_LATENCY: Omit<LatencyModel, 'scale' | 'seed'> = {
  ttftMs: 400,
  prefillTokensPerSec: 20_000,
  outputTokensPerSec: 200,
  jitter: 0,
};

/** Issue 13's tool time for that comparison, at scale 1: every call takes at least this long. */
export const PEER_TOOL_MS = 500;

/** Latency without jitter, at the model's scale. */
export function nominalLatencyMs(model: LatencyModel, inputTokens: number, outputTokens: number): number {
  const ms =
    model.ttftMs + (inputTokens * 1000) / model.prefillTokensPerSec + (outputTokens * 1000) / model.outputTokensPerSec;
  return ms * model.scale;
}

/** Latency of one request: nominal times a jitter drawn from `hash(seed, key)`. */
export function latencyMs(model: LatencyModel, inputTokens: number, outputTokens: number, key: string): number {
  const [u1, u2] = uniforms(`${model.seed}:${key}`);
  // Box–Muller; the -σ²/2 keeps the mean factor at 1.
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  const factor = Math.exp(model.jitter * z - (model.jitter * model.jitter) / 2);
  return nominalLatencyMs(model, inputTokens, outputTokens) * factor;
}

/** Two uniforms in (0, 1) from a string. */
export function uniforms(key: string): [number, number] {
  const h = createHash('sha256').update(key).digest();
  return [(h.readUInt32BE(0) + 1) / 4_294_967_297, (h.readUInt32BE(4) + 1) / 4_294_967_297];
}

/** Tokens as the fake counts them: a quarter of the characters, rounded up (the test fake's rule). */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

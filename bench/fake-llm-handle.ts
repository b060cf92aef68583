/**
 * The bench's side of the fake LLM process: spawns it, configures it, and collects its per-request records
 * (role, task, server-counted tokens, the latency it applied, status) between flushes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { GeneratedFile } from './fs-tree.ts';
import type { LatencyModel } from './latency-model.ts';

/** Settings of the fake; sent again to change them (the rate limit, say). */
export interface FakeLlmConfig {
  scale: number;
  seed: number;
  latency?: Partial<Omit<LatencyModel, 'scale' | 'seed'>>;
  files: GeneratedFile[];
  /** Refuse once, with 429 and this Retry-After, the 1st and then every `every`-th distinct request of each run. */
  rateLimit?: { every: number; retryAfterMs: number };
  /**
   * Simulate OpenAI's prompt cache (bench/prompt-cache-model.ts): off unless a section asks, so the other sections'
   * figures stay comparable with those measured before it existed.
   */
  promptCache?: boolean;
}

/** One request as the fake answered it. */
export interface LlmCallRecord {
  role: string;
  taskId: string | null;
  round: number | null;
  inputTokens: number;
  outputTokens: number;
  /** The delay the latency model applied (0 for a refusal). */
  latencyMs: number;
  status: number;
  /** With `promptCache` on: the input tokens read from the simulated OpenAI cache (charged no prefill). */
  cachedTokens?: number;
  /** With `promptCache` on: what Anthropic's rule would have read, by `${layout}-${minimum tokens}`. */
  anthropicCached?: Record<string, number>;
  /** With `promptCache` on: what Anthropic's rule would have written to its cache, keyed the same way. */
  anthropicWritten?: Record<string, number>;
}

/** Messages from the process. */
export type FakeLlmMessage =
  | ({ type: 'call' } & LlmCallRecord)
  | { type: 'failure'; message: string }
  | { type: 'configured'; id: number; baseURL: string }
  | { type: 'flushed'; id: number };

/** A running fake LLM process. */
export interface FakeLlmProcess {
  baseURL: string;
  pid: number | undefined;
  configure(config: FakeLlmConfig): Promise<void>;
  /** Every record and failure since the last flush. */
  flush(): Promise<{ calls: LlmCallRecord[]; failures: string[] }>;
  close(): Promise<void>;
}

const SCRIPT = join(import.meta.dirname, 'fake-llm-process.ts');

/** Spawns and configures the fake LLM process. */
export async function startFakeLlmProcess(config: FakeLlmConfig): Promise<FakeLlmProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit').catch(() => undefined);
  let calls: LlmCallRecord[] = [];
  let failures: string[] = [];
  let nextId = 1;
  const waiting = new Map<number, (m: FakeLlmMessage) => void>();
  child.on('message', (raw) => {
    const m = raw as FakeLlmMessage;
    if (m.type === 'call') {
      const { type: _type, ...record } = m;
      calls.push(record);
    } else if (m.type === 'failure') failures.push(m.message);
    else waiting.get(m.id)?.(m);
  });
  const ask = (message: Record<string, unknown>): Promise<FakeLlmMessage> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(
        () => reject(new Error(`fake LLM process did not answer ${String(message['type'])}`)),
        30_000,
      );
      waiting.set(id, (m) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(m);
      });
      child.send({ ...message, id });
    });
  const configure = async (c: FakeLlmConfig) => {
    const m = await ask({ type: 'configure', config: c });
    return m.type === 'configured' ? m.baseURL : '';
  };
  const baseURL = await configure(config);
  return {
    baseURL,
    pid: child.pid,
    configure: async (c) => void (await configure(c)),
    flush: async () => {
      await ask({ type: 'flush' });
      const out = { calls, failures };
      calls = [];
      failures = [];
      return out;
    },
    close: async () => {
      if (child.connected) child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

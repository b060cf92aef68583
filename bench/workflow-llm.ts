/**
 * The fake LLM of the workflow bench, in its own process so answering 1,000 report calls stays off the event loop
 * being measured. It answers the synthesizer at once and counts every request by role: the planner must never be
 * asked (a fire runs a saved plan), so a planner request gets an error status and is counted.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startFakeLlm } from '../test/fakes/fake-llm-server.ts';

/** The running fake. */
export interface WorkflowLlm {
  baseURL: string;
  /** Requests so far by role (`unmarked` for one without a role marker). */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** What a fired run's report says. */
export const REPORT_TEXT = 'Looked it up.';

type Reply = { id: number; value: unknown };

/** Forks the fake's process and waits until it listens. */
export async function startWorkflowLlm(): Promise<WorkflowLlm> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--workflow-llm-child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit').catch(() => undefined);
  const waiting = new Map<number, (value: unknown) => void>();
  let nextId = 1;
  child.on('message', (raw) => {
    const r = raw as Reply;
    waiting.get(r.id)?.(r.value);
    waiting.delete(r.id);
  });
  const ask = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`the workflow bench's fake LLM did not answer ${type}`)), 30_000);
      waiting.set(id, (value) => {
        clearTimeout(timer);
        resolve(value as T);
      });
      child.send({ id, type });
    });
  const baseURL = await ask<string>('start');
  return {
    baseURL,
    counts: () => ask<Record<string, number>>('counts'),
    close: async () => {
      if (child.connected) child.send({ id: 0, type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function runChild(): Promise<void> {
  const counts: Record<string, number> = {};
  const llm = await startFakeLlm((req) => {
    const role = req.role ?? 'unmarked';
    counts[role] = (counts[role] ?? 0) + 1;
    return role === 'synthesizer' ? REPORT_TEXT : { status: 500, body: { error: { message: `no ${role} here` } } };
  });
  process.on('message', (raw) => {
    const m = raw as { id: number; type: string };
    if (m.type === 'start') process.send?.({ id: m.id, value: llm.baseURL });
    else if (m.type === 'counts') process.send?.({ id: m.id, value: counts });
    else if (m.type === 'close') void llm.close().finally(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv.includes('--workflow-llm-child')) void runChild();

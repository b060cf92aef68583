/** What Steward is built from: the ports, the clock and id source, a log, and the settings. */
import type { LlmClient, Notifier, RunSignals, RunStore, TokenBudgets, ToolRunner } from '../ports.ts';

/** Writes one line to the operator's log (never to people). */
export type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

/** Limits and policies, all from configuration. */
export interface StewardSettings {
  maxParallel: number;
  maxAttempts: number;
  amendmentCap: number;
  maxRepairs: number;
  reviewTimeoutMs: number;
  /** Actors (as `<channel>:<id>`) who may decide on anyone's runs. */
  approvers?: string[];
  /** Model tokens per run and per person per day; unlimited when absent. */
  budgets?: TokenBudgets;
  /** How long a run's lease lasts unless renewed (default 15 s): a dead process's runs wait this long for a new owner. */
  leaseMs?: number;
}

/** Everything the composition root hands to `Steward`; each flow keeps only the parts it uses. */
export interface StewardDeps {
  llm: LlmClient;
  tools: ToolRunner;
  store: RunStore;
  notifier: Notifier;
  clock: () => Date;
  newId: () => string;
  log: Log;
  settings: StewardSettings;
  /** Signals from other processes on the same database; without them, queued decisions wait for the next round. */
  signals?: RunSignals;
}

/** The metered model client of one run (its tokens count against the run's and the requester's budgets). */
export type LlmForRun = (run: { id: string; requester: { id: string; channel: string; name?: string } }) => LlmClient;

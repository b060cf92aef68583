/**
 * What Steward's flows share: their dependencies, the runs this process drives, review timers, and small
 * helpers for telling people things and keeping the audit trail.
 */
import type { Plan } from '../plan/plan-schema.ts';
import type { Conversation, LlmClient, Notifier, RunStore, StoredRun, TokenBudgets, ToolRunner } from '../ports.ts';
import { guardsDataFlow, isIdempotent, toolRisk } from '../plan/risk.ts';
import type { RunDriver } from './run-driver.ts';
import type { StepPolicy } from '../run/dispatch.ts';
import { DEFAULT_STEP_TIMEOUT_MS } from '../run/dispatch-schedule.ts';
import type { Actor, DecisionAction, RunStatus } from '../types.ts';

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
}

export interface StewardDeps {
  llm: LlmClient;
  tools: ToolRunner;
  store: RunStore;
  notifier: Notifier;
  clock: () => Date;
  newId: () => string;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  settings: StewardSettings;
}

/** Shared state of one Steward; every map is keyed by run id, so runs never see each other's state. */
export interface StewardContext {
  deps: StewardDeps;
  drivers: Map<string, RunDriver>;
  finishing: Set<Promise<void>>;
  timers: Map<string, NodeJS.Timeout>;
}

/** The buttons (or commands) that make sense for a run in a given status. */
export function actionsFor(status: RunStatus, amendmentsLeft: number): DecisionAction[] {
  switch (status) {
    case 'awaiting_review':
      return amendmentsLeft > 0 ? ['approve', 'amend', 'cancel'] : ['approve', 'cancel'];
    case 'running':
      return ['pause', 'stop'];
    case 'paused':
      return ['resume', 'stop'];
    default:
      return [];
  }
}

/** Tells the conversation (or, with `to`, only that person) something. */
export async function notice(
  ctx: StewardContext,
  conversation: Conversation,
  runId: string,
  level: 'info' | 'warning' | 'error',
  text: string,
  to?: Actor,
): Promise<void> {
  await ctx.deps.notifier.send(conversation, { kind: 'notice', runId, level, text, ...(to ? { to } : {}) });
}

/** Tells adapters the run's status changed, so cards show the right buttons. */
export async function announceStatus(ctx: StewardContext, run: StoredRun, status: RunStatus): Promise<void> {
  const left = Math.max(0, ctx.deps.settings.amendmentCap - run.amendmentRounds);
  await ctx.deps.notifier.send(run.conversation, {
    kind: 'runStatus',
    runId: run.id,
    status,
    actions: actionsFor(status, left),
  });
}

/** Per-step policies from the tool catalog as it is now. */
export function policiesFor(ctx: StewardContext, plan: Plan): Record<string, StepPolicy> {
  const tools = new Map(ctx.deps.tools.listTools().map((t) => [t.name, t]));
  const out: Record<string, StepPolicy> = {};
  for (const s of plan.steps) {
    const tool = s.kind === 'tool' ? tools.get(s.tool) : undefined;
    out[s.id] = {
      idempotent: tool ? isIdempotent(tool) : false,
      timeoutMs: tool?.policy.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
      risk: tool ? toolRisk(tool) : 'low',
      guardRefs: tool ? guardsDataFlow(tool) : false,
      trustedRefFields: tool?.policy.trustedRefFields ?? [],
    };
  }
  return out;
}

/** The requester, or a configured approver, may decide on a run; nobody else. */
export function mayDecide(ctx: StewardContext, run: StoredRun, actor: Actor): boolean {
  if (actor.channel === run.requester.channel && actor.id === run.requester.id) return true;
  return (ctx.deps.settings.approvers ?? []).includes(`${actor.channel}:${actor.id}`);
}

/** A person's name for messages. */
export function who(actor: Actor): string {
  return actor.name ?? actor.id;
}

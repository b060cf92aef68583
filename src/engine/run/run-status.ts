/** A status answer built from the database alone: no model call. */
import type { Plan } from '../plan/plan-schema.ts';
import { formatCost } from '../model-cost.ts';
import type {
  LlmUsageTotals,
  RunEvent,
  StoredDecision,
  StoredRevision,
  StoredRun,
  StoredStepAttempt,
} from '../ports.ts';
import { cut, outputText } from '../text.ts';
import type { SentencePart } from '../messages.ts';
import { latestAttempts } from './attempts.ts';
import { sentence } from './run-actions.ts';
import type { Actor, RunStatus } from '../types.ts';

/**
 * Which step the run is on, what each finished step returned in short, and what is left. A step whose call was
 * refused for want of the requester's own connection never ran: it is left, not failed (it waits for them).
 */
export function describeRun(status: RunStatus, plan: Plan | null, attempts: readonly StoredStepAttempt[]): string {
  if (!plan) return `This request is ${status.replace('_', ' ')}; there is no plan yet.`;
  const latest = latestAttempts(attempts.filter((a) => a.error?.code !== 'not_connected'));
  const ended = plan.steps.filter((s) =>
    ['succeeded', 'failed', 'skipped', 'cancelled'].includes(latest.get(s.id)?.status ?? ''),
  );
  const running = plan.steps.filter((s) => latest.get(s.id)?.status === 'running');
  const left = plan.steps.filter((s) => !latest.has(s.id));
  const lines = [`Run ${status.replace('_', ' ')}: ${ended.length}/${plan.steps.length} steps finished.`];
  for (const s of ended) {
    const a = latest.get(s.id) as StoredStepAttempt;
    const what =
      a.status === 'succeeded' ? cut(outputText(a.output ?? undefined), 160) : (a.error?.message ?? a.status);
    lines.push(`• ${s.id} ${a.status}: ${what}`);
  }
  if (running.length > 0) lines.push(`Running now: ${running.map((s) => s.id).join(', ')}`);
  lines.push(left.length > 0 ? `Left: ${left.map((s) => s.id).join(', ')}` : 'Nothing left to start.');
  return lines.join('\n');
}

/** The events that start and end a wait for the requester's own connection (`ConnectionWaits` stores them). */
export const CONNECTION_WAIT_EVENTS = ['connectionNeeded', 'connected'] as const;

/**
 * The servers a run's steps wait on for its requester to connect, from its stored events and attempts alone (so any
 * process answers the same): a `connectionNeeded` not followed by a `connected` for its server, nor by a start of
 * the step it named (the run went on some other way, e.g. taken over by a process that found the connection).
 */
export function connectionWaits(events: readonly RunEvent[], attempts: readonly StoredStepAttempt[]): string[] {
  const waits = new Map<string, { stepId: string; since: number }>();
  for (const e of events) {
    const payload = (e.payload ?? {}) as { stepId?: unknown; server?: unknown };
    if (typeof payload.server !== 'string') continue;
    if (e.type === 'connected') waits.delete(payload.server);
    else if (e.type === 'connectionNeeded' && typeof payload.stepId === 'string')
      waits.set(payload.server, { stepId: payload.stepId, since: e.createdAt.getTime() });
  }
  const started = (w: { stepId: string; since: number }) =>
    attempts.some((a) => a.stepId === w.stepId && a.startedAt.getTime() > w.since);
  return [...waits].filter(([, w]) => !started(w)).map(([server]) => server);
}

/** What a status answer adds while steps wait for a connection (the requester's own, or the workspace's); null when none waits. */
export function connectionWaitSentence(
  requester: Actor,
  servers: readonly string[],
  workspaceServers: readonly string[] = [],
): SentencePart[] | null {
  const own = servers.filter((s) => !workspaceServers.includes(s));
  const shared = servers.filter((s) => workspaceServers.includes(s));
  const parts: SentencePart[] = [];
  if (own.length > 0)
    parts.push(
      ...sentence`Waiting for ${requester} to connect ${own.join(', ')} (with their own account; a private link was sent to them).`,
    );
  if (shared.length > 0)
    parts.push(
      `${parts.length > 0 ? ' ' : ''}Waiting for an approver to connect ${shared.join(', ')} for the workspace (with the connections command).`,
    );
  return parts.length > 0 ? parts : null;
}

/**
 * The run's history: each plan revision and each decision, with who (kept as a person, so each channel shows them
 * its way), from which channel, and when; then, given `usage`, its model calls, tokens and cost.
 */
export function describeHistory(
  run: StoredRun,
  revisions: readonly StoredRevision[],
  decisions: readonly StoredDecision[],
  usage?: LlmUsageTotals,
): SentencePart[] {
  const entries = [
    // The quick path's record (a revision below 0) is no plan revision: its reason says what it called.
    ...revisions.map((r) => ({
      at: r.createdAt,
      said: [r.revision < 0 ? r.reason : `revision ${r.revision}: ${r.reason}`],
    })),
    ...decisions.map((d) => ({
      at: d.createdAt,
      said: sentence`${d.actor} (${d.actor.channel}) ${d.action} on revision ${d.revision}: ${d.accepted ? 'accepted' : `refused — ${d.note ?? ''}`}`,
    })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime());
  const parts: SentencePart[] = [`History of "${cut(run.request, 80)}" (now ${run.status.replace('_', ' ')}):`];
  for (const e of entries) parts.push(`\n${e.at.toISOString()}  `, ...e.said);
  if (usage && usage.calls > 0) parts.push(`\n${describeUsage(usage)}`);
  return parts;
}

/** A run's model use in one line: `Model use: 3 calls, 1,234 tokens (200 cached), $0.0123.` */
export function describeUsage(usage: LlmUsageTotals): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const tokens = usage.inputTokens + usage.outputTokens;
  const cached = usage.cachedInputTokens > 0 ? ` (${n(usage.cachedInputTokens)} cached)` : '';
  const calls = usage.calls === 1 ? '1 call' : `${n(usage.calls)} calls`;
  return `Model use: ${calls}, ${n(tokens)} tokens${cached}, ${formatCost(usage.costMicroUsd)}.`;
}

/** A run status in words, for sentences like "That plan is …". */
export function describeStatus(status: RunStatus): string {
  const words: Record<RunStatus, string> = {
    planning: 'being planned',
    awaiting_review: 'waiting for review',
    running: 'running',
    paused: 'paused',
    stopping: 'stopping',
    completed: 'finished',
    failed: 'failed',
    cancelled: 'cancelled',
    stopped: 'stopped',
  };
  return words[status];
}

/** A wait in words: seconds under a minute, else minutes. */
export function formatDuration(ms: number): string {
  return ms < 60_000 ? `${Math.max(1, Math.round(ms / 1000))} s` : `${Math.round(ms / 60_000)} min`;
}

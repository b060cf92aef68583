/** Who may decide on a run, which decisions its status allows, and how many amendments it has left. */
import type { SentencePart } from '../messages.ts';
import type { StoredRun } from '../ports.ts';
import type { Actor, DecisionAction, RunStatus } from '../types.ts';

/** Amendment rounds a run may still take under the configured cap. */
export function amendmentsLeft(run: Pick<StoredRun, 'amendmentRounds'>, cap: number): number {
  return Math.max(0, cap - run.amendmentRounds);
}

/** The buttons (or commands) that make sense for a run in a given status. */
export function actionsFor(status: RunStatus, amendments: number): DecisionAction[] {
  switch (status) {
    case 'awaiting_review':
      return amendments > 0 ? ['approve', 'amend', 'cancel'] : ['approve', 'cancel'];
    case 'running':
      return ['pause', 'stop'];
    case 'paused':
      return ['resume', 'stop'];
    default:
      return [];
  }
}

/**
 * A plan waiting for its first review: nobody approved any of it (a plan held after steps started early, or any
 * plan before its approval), so Amend and Edit revise it and all of it waits again.
 */
export function atFirstReview(run: Pick<StoredRun, 'status' | 'approvedRisk'>): boolean {
  return run.status === 'awaiting_review' && run.approvedRisk === null;
}

/**
 * The buttons (or commands) of a card shown while steps of a started run wait for approval: approve them, amend the
 * steps not yet run (while rounds are left), or stop the run, keeping what finished (`cancel` is still understood
 * there, and does the same as Stop).
 */
export function heldActions(amendments: number): DecisionAction[] {
  return amendments > 0 ? ['approve', 'amend', 'stop'] : ['approve', 'stop'];
}

/**
 * The requester, or a configured approver (`<channel>:<id>`, or `<channel>:role:<role id>` for anyone holding that
 * role as they act), may decide on a run; nobody else.
 */
export function mayDecide(run: Pick<StoredRun, 'requester'>, actor: Actor, approvers: readonly string[]): boolean {
  if (actor.channel === run.requester.channel && actor.id === run.requester.id) return true;
  return isApprover(actor, approvers);
}

/** A configured approver: by id (`<channel>:<id>`), or by a role held as they act (`<channel>:role:<role id>`). */
export function isApprover(actor: Actor, approvers: readonly string[]): boolean {
  return approvers.includes(`${actor.channel}:${actor.id}`) || approverRoles(actor, approvers).length > 0;
}

/** The roles the actor holds as they act that name approvers (`<channel>:role:<role id>`). */
export function approverRoles(actor: Actor, approvers: readonly string[]): string[] {
  return (actor.roles ?? []).filter((role) => approvers.includes(`${actor.channel}:role:${role}`));
}

/** A person's name for messages. */
export function who(actor: Actor): string {
  return actor.name ?? actor.id;
}

/**
 * A sentence whose actors stay people (`sentence\`Approved by ${actor}.\``), so each channel can show them its way:
 * Slack as a mention that renders the name, the console as the name. Other values become text.
 */
export function sentence(strings: TemplateStringsArray, ...values: (string | number | Actor)[]): SentencePart[] {
  const parts: SentencePart[] = [];
  strings.forEach((text, i) => {
    if (text) parts.push(text);
    if (i >= values.length) return;
    const value = values[i] as string | number | Actor;
    parts.push(typeof value === 'object' ? { person: value } : String(value));
  });
  return parts;
}

/** A sentence as plain text, each person by name (or id). */
export function plainText(parts: readonly SentencePart[]): string {
  return parts.map((p) => (typeof p === 'string' ? p : who(p.person))).join('');
}

/**
 * Brakes only people can raise (issue 30). A plan may ask for a lower delegation depth than the operator's setting,
 * never a higher one: a step asking for more gets the setting. Its card says so and offers Raise depth, which only an
 * approver may press: their raise is recorded with who and when (`brake_raises`) and read by the spawn that judges the
 * depth, never above the ceiling of 5. Depth is the only brake a plan can name (rounds, messages and concurrency are
 * settings alone).
 */
import { DEFAULT_DELEGATION_LIMITS, DEPTH_CEILING, depthAskedAbove } from '../assistant/delegations.ts';
import type { InboundDecision } from '../channel.ts';
import type { Plan } from '../plan/plan-schema.ts';
import type { StoredRun } from '../ports.ts';
import { isApprover, sentence } from '../run/run-actions.ts';
import { isTerminal } from '../types.ts';
import type { StewardDeps } from './deps.ts';
import type { RunMessages } from './run-messages.ts';

/** What a raise needs: the delegation store (none: no delegation here), the settings and the clock. */
export type BrakeRaiseDeps = Pick<StewardDeps, 'settings' | 'clock' | 'delegations'>;

/** What a card says and offers about a depth its plan asks above the setting; nothing when it asks for none. */
export interface BrakeCardParts {
  warnings: string[];
  /** Raise depth is offered (the card waits for review and nobody raised it yet). */
  raisable: boolean;
}

/** The card's words about the depth brake and whether it offers Raise depth. */
export async function brakeCardParts(
  deps: BrakeRaiseDeps,
  run: Pick<StoredRun, 'id'>,
  plan: Plan,
  needsReview: boolean,
): Promise<BrakeCardParts> {
  const configured = (deps.settings.delegation ?? DEFAULT_DELEGATION_LIMITS).depth;
  const asked = deps.delegations ? depthAskedAbove(plan.steps, configured) : null;
  if (asked === null || !deps.delegations) return { warnings: [], raisable: false };
  const raise = await deps.delegations.depthRaise(run.id);
  if (raise && raise.depth >= asked)
    return {
      warnings: [
        `${raise.approver.name ?? raise.approver.id} (an approver) raised the delegation depth of this chain to ${raise.depth}; the operator's setting is ${configured}.`,
      ],
      raisable: false,
    };
  return {
    warnings: [
      `A step asks to hand work on ${asked} levels deep; the operator's setting is ${configured}, so it gets ${configured} ` +
        `unless an approver raises the brake with Raise depth (never more than ${DEPTH_CEILING}).`,
    ],
    raisable: needsReview,
  };
}

/**
 * Raise depth: an approver's raise of this run's delegation depth to what its plan asks (at most the ceiling),
 * recorded and told in the thread; anyone else's press is refused with the reason (null: accepted).
 */
export async function raiseDepthBrake(
  deps: BrakeRaiseDeps,
  messages: RunMessages,
  run: StoredRun,
  d: InboundDecision,
): Promise<string | null> {
  const configured = (deps.settings.delegation ?? DEFAULT_DELEGATION_LIMITS).depth;
  if (!deps.delegations) return 'Delegation is not set up here, so there is no brake to raise.';
  if (isTerminal(run.status)) return `This run has ended (${run.status}); there is no brake to raise.`;
  const asked = run.plan ? depthAskedAbove(run.plan.steps, configured) : null;
  if (asked === null)
    return `No step of this plan asks to hand work on deeper than the operator's setting (${configured}): there is nothing to raise.`;
  if (!isApprover(d.actor, deps.settings.approvers ?? []))
    return (
      `Only an approver can raise a brake: a plan's step may ask for less than the operator's settings, never more. ` +
      `This run's delegation depth stays ${configured}.`
    );
  const stands = await deps.delegations.raiseDepth(run.id, asked, d.actor, deps.clock());
  await messages.notice(
    run,
    'info',
    sentence`${d.actor} raised this run's delegation depth to ${stands.depth} (the operator's setting is ${configured}; never more than ${DEPTH_CEILING}). Recorded.`,
  );
  return null;
}

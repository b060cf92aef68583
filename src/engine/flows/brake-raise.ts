/**
 * Brakes only people can raise (issue 30). A plan may ask for a lower delegation depth than the operator's setting,
 * never a higher one: a step asking for more gets the setting. Its card says so and offers Raise depth, which only an
 * approver may press: their raise is recorded with who and when (`brake_raises`) and read by the spawn that judges the
 * depth, never above the ceiling of 5. Depth is the only brake a plan can name (rounds, messages and concurrency are
 * settings alone). Likewise a run one Assistant hands to another is bound by both Assistants' grants; Widen grants,
 * an approver's alone, lets it use its own Assistant's grants (recorded; read by `grantChain`).
 */
import { DEFAULT_DELEGATION_LIMITS, DELEGATE_TOOL, DEPTH_CEILING, depthAskedAbove } from '../assistant/delegations.ts';
import type { InboundDecision } from '../channel.ts';
import type { Plan } from '../plan/plan-schema.ts';
import type { StoredRun } from '../ports.ts';
import { isApprover, sentence } from '../run/run-actions.ts';
import { isTerminal } from '../types.ts';
import type { StewardDeps } from './deps.ts';
import type { RunMessages } from './run-messages.ts';

/** What a raise needs: the delegation store (none: no delegation here), the settings and the clock. */
export type BrakeRaiseDeps = Pick<StewardDeps, 'settings' | 'clock' | 'delegations'>;

/** What a card says and offers about the brakes and grants its plan meets; nothing when it delegates nothing. */
export interface BrakeCardParts {
  warnings: string[];
  /** Raise depth is offered (the card waits for review and nobody raised it yet). */
  raisable: boolean;
  /** Widen grants is offered (an Assistant's card handing work to another Assistant; nobody widened it yet). */
  widenable: boolean;
}

/** The card's words about the depth brake and narrowed grants, and whether it offers Raise depth and Widen grants. */
export async function brakeCardParts(
  deps: BrakeRaiseDeps,
  run: Pick<StoredRun, 'id' | 'assistant'>,
  plan: Plan,
  needsReview: boolean,
): Promise<BrakeCardParts> {
  const depth = await depthCardParts(deps, run, plan, needsReview);
  const grants = await grantCardParts(deps, run, plan, needsReview);
  return {
    warnings: [...depth.warnings, ...grants.warnings],
    raisable: depth.raisable,
    widenable: grants.widenable,
  };
}

/** The Assistants other than the run's own that its plan's delegate steps hand work to. */
function othersAskedBy(run: Pick<StoredRun, 'assistant'>, plan: Plan): string[] {
  const names = plan.steps.flatMap((s) => {
    const name = s.kind === 'tool' && s.tool === DELEGATE_TOOL ? s.args['assistant'] : undefined;
    return typeof name === 'string' && name !== run.assistant ? [name] : [];
  });
  return [...new Set(names)];
}

/** An Assistant's run handing work to another: the child is narrowed to both grants unless an approver widens it. */
async function grantCardParts(
  deps: BrakeRaiseDeps,
  run: Pick<StoredRun, 'id' | 'assistant'>,
  plan: Plan,
  needsReview: boolean,
): Promise<Omit<BrakeCardParts, 'raisable'>> {
  const others = run.assistant && deps.delegations ? othersAskedBy(run, plan) : [];
  if (others.length === 0 || !deps.delegations) return { warnings: [], widenable: false };
  const widened = await deps.delegations.grantsWidened(run.id);
  const who = others.join(', ');
  if (widened)
    return {
      warnings: [
        `${widened.approver.name ?? widened.approver.id} (an approver) let the runs this one hands to ${who} use their own grants, not only those ${run.assistant} has too.`,
      ],
      widenable: false,
    };
  return {
    warnings: [
      `This plan hands work to ${who}: that run may use only the tools ${run.assistant} is granted too (delegation ` +
        `narrows), unless an approver widens it to its own grants with Widen grants.`,
    ],
    widenable: needsReview,
  };
}

/** The card's words about a depth the plan asks above the setting, and whether it offers Raise depth. */
async function depthCardParts(
  deps: BrakeRaiseDeps,
  run: Pick<StoredRun, 'id'>,
  plan: Plan,
  needsReview: boolean,
): Promise<Pick<BrakeCardParts, 'warnings' | 'raisable'>> {
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

/**
 * Widen grants: an approver's decision that the runs this Assistant's run hands to another Assistant are bound by that
 * Assistant's own grants, not narrowed to this one's too; recorded and told in the thread. Anyone else's press is
 * refused with the reason (null: accepted).
 */
export async function widenGrantsDecision(
  deps: BrakeRaiseDeps,
  messages: RunMessages,
  run: StoredRun,
  d: InboundDecision,
): Promise<string | null> {
  if (!deps.delegations) return 'Delegation is not set up here, so there are no grants to widen.';
  if (isTerminal(run.status)) return `This run has ended (${run.status}); there are no grants to widen.`;
  const others = run.plan ? othersAskedBy(run, run.plan) : [];
  if (!run.assistant || others.length === 0)
    return 'This plan hands no work from one Assistant to another: there are no narrowed grants to widen.';
  if (!isApprover(d.actor, deps.settings.approvers ?? []))
    return (
      `Only an approver can widen grants: a run handed from ${run.assistant} to ${others.join(', ')} ` +
      `stays bound by the grants of both.`
    );
  await deps.delegations.widenGrants(run.id, d.actor, deps.clock());
  await messages.notice(
    run,
    'info',
    sentence`${d.actor} let the runs this one hands to ${others.join(', ')} use their own grants, not only those ${run.assistant} has too. Recorded.`,
  );
  return null;
}

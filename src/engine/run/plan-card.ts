/** Builds the platform-neutral plan card from a validated plan. */
import type { PlanEstimate } from '../estimate-history.ts';
import type { SpendOutlook } from '../spend.ts';
import type { PlanCard, PlanCardStep } from '../messages.ts';
import type { SuggestedBreakpoint } from '../plan/breakpoint-suggestions.ts';
import { stepsHeld, type Breakpoint } from '../plan/breakpoints.ts';
import { jsonValueDepth, MAX_OUTPUT_DEPTH } from '../plan/json-depth.ts';
import { collectRefs, resolveRefs } from '../plan/refs.ts';
import type { ValidatedPlan } from '../plan/validate-plan.ts';
import type { Actor, DecisionAction, Json } from '../types.ts';
import type { StepRuntime } from './dispatch-state.ts';
import { actionsFor } from './run-actions.ts';

const ARGS_PREVIEW = 300;

/** Options of a card: whether it waits for review, and what it shows besides the plan. */
export interface PlanCardOptions {
  needsReview: boolean;
  /** The plan starts now without review, at its first offer (see `PlanCard.autoStarted`). */
  autoStarted?: boolean;
  amendmentsLeft: number;
  requester: Actor;
  actions?: DecisionAction[];
  breakpoints?: readonly Breakpoint[];
  /** Breakpoints offered on the card, not set. */
  suggestedBreakpoints?: readonly SuggestedBreakpoint[];
  note?: string;
  /** Suspicious tool descriptions and the like, shown prominently. */
  warnings?: string[];
  /**
   * Outputs of the steps that ran (on a card shown mid-run, e.g. at a hold): a step whose references they fill
   * shows the values it sends, not `{"$ref": ...}`.
   */
  outputs?: ReadonlyMap<string, Json>;
  /**
   * Where each step stands (on a card shown mid-run: a hold, a revision, a restart), so finished steps are shown
   * finished, not pending.
   */
  progress?: Readonly<Record<string, StepRuntime>>;
  /** The Assistant the run belongs to, if any. */
  assistant?: string | null;
  /** The run whose `delegate` step this run carries out, if any. */
  delegatedBy?: string | null;
  /** The estimate shown on the card, if there is history to make one. */
  estimate?: PlanEstimate;
  /** Spend against the caps set, and the cap the run would pass (then only an approver's Approve starts it). */
  spend?: SpendOutlook;
  /** A step asks to delegate deeper than the setting and nobody raised it: the card offers Raise depth. */
  raisable?: boolean;
  /** An Assistant's plan hands work to another and nobody widened its grants: the card offers Widen grants. */
  widenable?: boolean;
}

/** The card people review; `needsReview` false means the plan already started and the card only informs. */
export function toPlanCard(runId: string, revision: number, v: ValidatedPlan, options: PlanCardOptions): PlanCard {
  return {
    kind: 'plan',
    runId,
    revision,
    summary: v.plan.summary,
    steps: v.plan.steps.map((s, i) => ({
      number: i + 1,
      id: s.id,
      kind: s.kind,
      target: s.kind === 'tool' ? s.tool : s.kind === 'llm' ? 'llm' : s.expression,
      argsPreview:
        s.kind === 'condition'
          ? `true → ${s.ifTrue.join(', ') || '—'}; false → ${s.ifFalse.join(', ') || '—'}`
          : preview(filledIn(s.args, options.outputs)),
      dependsOn: s.dependsOn,
      description: s.description,
      optional: s.optional,
      risk: v.stepRisk[s.id] ?? 'low',
      ...(v.perPerson?.includes(s.id) ? { as: options.requester } : {}),
      ...(v.asWorkspace?.includes(s.id) ? { asWorkspace: true as const } : {}),
      ...stepProgress(options.progress?.[s.id]),
    })),
    layers: v.layers,
    risk: v.risk,
    risks: v.plan.risks,
    needsReview: options.needsReview,
    ...(options.autoStarted && !options.needsReview ? { autoStarted: true as const } : {}),
    amendmentsLeft: options.amendmentsLeft,
    requester: options.requester,
    actions: [
      ...(options.actions ?? actionsFor(options.needsReview ? 'awaiting_review' : 'running', options.amendmentsLeft)),
      ...(options.raisable ? (['raise'] as const) : []),
      ...(options.widenable ? (['widen'] as const) : []),
    ],
    breakpoints: stepsHeld(options.breakpoints ?? [], 'after'),
    breakpointsBefore: stepsHeld(options.breakpoints ?? [], 'before'),
    suggestedBreakpoints: [...(options.suggestedBreakpoints ?? [])],
    ...(options.note ? { note: options.note } : {}),
    ...(options.assistant ? { assistant: options.assistant } : {}),
    ...(options.delegatedBy ? { delegatedBy: options.delegatedBy } : {}),
    ...(options.estimate ? { estimate: options.estimate } : {}),
    ...(options.spend ? { spend: options.spend } : {}),
    warnings: options.warnings ?? [],
  };
}

/** A started step's status and, when it failed or was skipped, why; nothing for a step not started. */
function stepProgress(runtime: StepRuntime | undefined): Pick<PlanCardStep, 'status' | 'detail'> {
  if (!runtime || runtime.status === 'pending') return {};
  return { status: runtime.status, detail: runtime.error?.message ?? runtime.note ?? '' };
}

/** The arguments with their references filled in, when every one can be (and shown); else as written. */
function filledIn(args: Json, outputs: ReadonlyMap<string, Json> | undefined): Json {
  if (!outputs || collectRefs(args).length === 0) return args;
  const resolved = resolveRefs(args, outputs);
  if (!resolved.ok || jsonValueDepth(resolved.value, MAX_OUTPUT_DEPTH) > MAX_OUTPUT_DEPTH) return args;
  return resolved.value;
}

function preview(args: unknown): string {
  const text = JSON.stringify(args);
  return text.length > ARGS_PREVIEW ? `${text.slice(0, ARGS_PREVIEW - 1)}…` : text;
}

/**
 * The live state of one run's card in a chat (pure): the plan card the engine sent, folded with the progress
 * updates, status changes and report that followed. Each platform's renderer draws it (Block Kit, Discord).
 */
import type { PlanCard, PlanCardStep, ProgressUpdate, Report, RunStatusChange } from '../engine/messages.ts';
import type { SuggestedBreakpoint } from '../engine/plan/breakpoint-suggestions.ts';
import type { Breakpoint } from '../engine/plan/breakpoints.ts';
import { isSteerable, isTerminal, type DecisionAction, type RunStatus, type StepStatus } from '../engine/types.ts';

/** What the card shows about one step. */
export interface LiveStep {
  status: StepStatus;
  detail: string;
}

/** A run's card as it should look now. Times are epoch milliseconds. */
export interface LiveCard {
  card: PlanCard;
  status: RunStatus;
  actions: DecisionAction[];
  steps: Record<string, LiveStep>;
  finished: number;
  total: number;
  /** When the run started running (null while it waits for review). */
  startedAt: number | null;
  endedAt: number | null;
  /** The plan started without review (low risk, or the requester's preference), so the card offers "ask me first". */
  autoStarted: boolean;
  /** Once the run ended: how long it took and what was estimated, as the engine measured it. */
  took?: RunStatusChange['took'];
}

/**
 * A fresh live card for a plan card (a new run, or one shown again after a restart). Steps the engine says have
 * started keep their state; a card shown after the run started (not for review, or a hold mid-run) counts time.
 */
export function createLiveCard(card: PlanCard, now: number): LiveCard {
  const status: RunStatus = card.needsReview
    ? 'awaiting_review'
    : card.actions.includes('resume')
      ? 'paused'
      : 'running';
  const steps: Record<string, LiveStep> = {};
  for (const s of card.steps) steps[s.id] = { status: s.status ?? 'pending', detail: s.detail ?? '' };
  const started = !card.needsReview || carriesProgress(card);
  return {
    card,
    status,
    actions: card.actions,
    steps,
    finished: countFinished(steps),
    total: card.steps.length,
    startedAt: started ? now : null,
    endedAt: null,
    autoStarted: card.autoStarted === true,
  };
}

/**
 * The card for a new revision of a run it already shows (an amendment or edit, a hold, a card sent again). Before
 * the run started nothing has run, so it starts afresh. After, finished steps stay finished whether or not the new
 * card waits for review: what the engine says about each step wins, and a card that says nothing keeps what the
 * old one showed for the steps that kept their id (the engine only lets unstarted steps change).
 */
export function withNewRevision(previous: LiveCard, card: PlanCard, now: number): LiveCard {
  const next = createLiveCard(card, now);
  if (previous.startedAt === null) return next;
  const steps: Record<string, LiveStep> = { ...next.steps };
  if (!carriesProgress(card))
    for (const id of Object.keys(steps)) steps[id] = previous.steps[id] ?? (steps[id] as LiveStep);
  return {
    ...next,
    steps,
    finished: countFinished(steps),
    startedAt: previous.startedAt,
    autoStarted: previous.autoStarted,
  };
}

/** Whether the run behind a card waiting for review has already started: steps are held mid-run. */
export function isHeldMidRun(live: LiveCard): boolean {
  return live.status === 'awaiting_review' && live.startedAt !== null;
}

function carriesProgress(card: PlanCard): boolean {
  return card.steps.some((s) => s.status !== undefined && s.status !== 'pending');
}

function countFinished(steps: Record<string, LiveStep>): number {
  return Object.values(steps).filter((s) => s.status !== 'pending' && s.status !== 'running').length;
}

/** Whether the run behind the card has ended, so its buttons are gone and replies are no longer for it. */
export function isFinished(live: LiveCard): boolean {
  return isTerminal(live.status);
}

/** The card after a step started or ended. */
export function withProgress(live: LiveCard, update: ProgressUpdate, now: number): LiveCard {
  if (isFinished(live)) return live;
  return {
    ...live,
    steps: { ...live.steps, [update.stepId]: { status: update.status, detail: update.detail } },
    finished: update.finished,
    total: update.total,
    startedAt: live.startedAt ?? now,
  };
}

/** The card after the run changed status (its valid buttons come with the change). */
export function withRunStatus(live: LiveCard, change: RunStatusChange, now: number): LiveCard {
  if (isFinished(live)) return live;
  const ended = isTerminal(change.status);
  const running = change.status === 'running' || change.status === 'paused' || change.status === 'stopping';
  return {
    ...live,
    status: change.status,
    actions: ended ? [] : change.actions,
    startedAt: live.startedAt ?? (running ? now : null),
    endedAt: ended ? now : null,
    ...(ended && change.took ? { took: change.took } : {}),
  };
}

/** The card once the run's report is written: final status, no buttons. */
export function withReport(live: LiveCard, report: Report, now: number): LiveCard {
  return { ...live, status: report.status, actions: [], endedAt: live.endedAt ?? now };
}

/** The short notes a step line or task card shows beside a step: order, optional, risk and breakpoints. */
export function stepNotes(step: PlanCardStep, live: LiveCard): string[] {
  const notes: string[] = [];
  if (step.dependsOn.length > 0) notes.push(`after ${step.dependsOn.join(', ')}`);
  if (step.optional) notes.push('optional');
  if (step.risk !== 'low') notes.push(`risk ${step.risk}`);
  if (live.card.breakpoints.includes(step.id)) notes.push('breakpoint after');
  if (live.card.breakpointsBefore.includes(step.id)) notes.push('breakpoint before');
  else if (openSuggestions(live).some((b) => b.stepId === step.id)) notes.push('breakpoint suggested before');
  return notes;
}

/** The card with the breakpoints as stored now, so the step lines and the picker show them. */
export function withBreakpoints(live: LiveCard, breakpoints: readonly Breakpoint[]): LiveCard {
  const when = (w: Breakpoint['when']) => breakpoints.filter((b) => b.when === w).map((b) => b.stepId);
  return { ...live, card: { ...live.card, breakpoints: when('after'), breakpointsBefore: when('before') } };
}

/** The breakpoints the card still offers: not taken yet, before steps not yet started, while the plan can change. */
export function openSuggestions(live: LiveCard): SuggestedBreakpoint[] {
  if (!isSteerable(live.status)) return [];
  return live.card.suggestedBreakpoints.filter(
    (b) => !live.card.breakpointsBefore.includes(b.stepId) && (live.steps[b.stepId]?.status ?? 'pending') === 'pending',
  );
}

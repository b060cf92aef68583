/**
 * The scenario matrix of issue 25, as data: every steering action × plan shape × what else is in play × channel.
 * A cell either runs (a channel's driver performs it and the oracle judges it), is not applicable (with the reason,
 * counted and listed), or is not driven yet on that channel (listed too: a gap, never a silent drop).
 */
import { allPairs, product, type Combination } from './pairwise.ts';

/** What the person does, as they would on the channel. */
export const ACTIONS = [
  'approve',
  'amend',
  'edit',
  'cancel',
  'pause',
  'resume',
  'stop',
  'breakpoint',
  'status',
  'history',
  'new',
] as const;

/** The plan the planner writes (test/scenarios/plans.ts). */
export const SHAPES = ['readOnly', 'readThenWrite', 'fanOut', 'chain', 'held', 'delegate'] as const;

/**
 * What else is in play. Every context but `earlyStartOff` runs under review preference `risky` (the README default).
 * A step waiting for its requester's own connection, or for an approver to connect the workspace's, is not a context
 * here: its rows (status, stop, pause, cancel; for the workspace's: status, stop, pause, and going on once an
 * approver connects) are the chat spec test/chat/connection-waits-spec.ts, on Slack and Discord, with an OAuth
 * server and a web origin.
 */
export const CONTEXTS = [
  'earlyStartOn',
  'earlyStartOff',
  'invalidFirstAnswer',
  'quickAnswerBefore',
  'secondActiveRun',
  'assistant',
  'workflowFire',
  'restartBeforeDecision',
  'secondProcess',
  // A spend cap holds the run (issue 30): its estimate passes what is left of a cap, or a call it makes is refused.
  'spendCapHeld',
  // An MCP server's question is open mid-call (issue 29, elicitation): see QUESTION_OPEN.
  'questionOpen',
  // A step's call is in flight and its server reports progress (issue 29): see PROGRESS_REPORTING.
  'progressReporting',
] as const;

export const CHANNELS = ['console', 'slack', 'discord'] as const;

export type Action = (typeof ACTIONS)[number];
export type Shape = (typeof SHAPES)[number];
export type Context = (typeof CONTEXTS)[number];
export type Channel = (typeof CHANNELS)[number];

/** The three dimensions the covering set pairs (the channel is a fourth, run separately: all pairs per channel). */
export const DIMENSIONS = { action: ACTIONS, shape: SHAPES, context: CONTEXTS } as const;
export type Cell = Combination<typeof DIMENSIONS>;

/** Actions taken on a plan card (or, where the plan started at once, on the running plan). */
export const REVIEW_ACTIONS: readonly Action[] = ['approve', 'amend', 'edit', 'cancel', 'breakpoint'];

/**
 * Where the person decides: at the review card (`card`), at the card of a step held mid-run (`hold`), or on a
 * run that started at once with no card (`running`): a read-only plan is low risk, which `risky` does not review.
 */
export function decisionPoint(c: Pick<Cell, 'shape' | 'context'>): 'card' | 'hold' | 'running' {
  if (c.shape === 'held') return 'hold';
  // A workflow's fire is reviewed as its review setting says: the matrix sets every-fire, so each fire has a card.
  // A plan estimated past a spend cap waits for an approver whatever its risk.
  const reviewed = ['earlyStartOff', 'workflowFire', 'spendCapHeld'];
  if (c.shape === 'readOnly' && !reviewed.includes(c.context)) return 'running';
  return 'card';
}

/** Why a cell cannot apply, or null when it can. Reasons are sentences, listed in the run's summary. */
export function notApplicable(c: Cell): string | null {
  const at = decisionPoint(c);
  if (at === 'running' && (c.action === 'approve' || c.action === 'cancel'))
    return `${c.action} × read-only plan under review "risky": a low-risk plan starts at once, so there is no card to ${c.action} (stop covers ending it)`;
  if (c.shape === 'delegate' && c.context === 'workflowFire')
    return "workflow fire × delegate plan: a run that hands work to an Assistant cannot be saved as a workflow (its fires never plan, and would not carry the Assistant's grants)";
  if (c.context === 'questionOpen' && (c.action === 'approve' || c.action === 'cancel'))
    return `${c.action} × a question open: a server asks only during a step's call, once the plan runs, so there is no card to ${c.action} then (stop covers ending it)`;
  if (at === 'running' && c.context === 'restartBeforeDecision')
    return 'restart between card and decision × read-only plan under "risky": the plan starts at once, there is no card to restart between';
  return null;
}

/** Preconditions performed before an action, as data: a cell's driver does these first. */
export const BEFORE: Partial<Record<Action, { action: Action; why: string }>> = {
  resume: { action: 'pause', why: 'resume needs a paused run: it is performed after a pause' },
};

/**
 * The delegate shape hands `d` to the Assistant "ops", whose child run (its own card, one lookup, which starts at
 * once) reports back before the parent's `think`. Every action applies to the parent only: review actions are taken
 * on the parent's card, before the child exists; the others while the parent's `think` runs, after the child
 * reported. So the child ends as it would untouched, or never starts when the parent is cancelled at its card. (A
 * stop reaching a child mid-run is told in test/e2e/delegation-console.test.ts.)
 */
export const DELEGATE_CHILD: Record<Action, 'completed' | 'none'> = {
  approve: 'completed',
  amend: 'completed',
  edit: 'completed',
  cancel: 'none',
  pause: 'completed',
  resume: 'completed',
  stop: 'completed',
  breakpoint: 'completed',
  status: 'completed',
  history: 'completed',
  new: 'completed',
};

/**
 * What each action does while a spend cap holds the run (context `spendCapHeld`, test/scenarios/spend-held.ts): the
 * plan's estimate passes what is left of the workspace's daily cap, so its card says it waits for an approver,
 * whatever its risk. Every channel drives it: the run's first approval is the requester's Approve (refused, naming the
 * cap) and then an approver's (recorded as past the cap); the action's story is then told as in any context. A call
 * the cap refuses mid-run (the run paused, an approver's Resume going past) is told in test/e2e/console-spend.test.ts,
 * and `/steward spend` in test/e2e/slack-spend.test.ts and discord-spend.test.ts.
 */
export const SPEND_CAP_HELD: Record<Action, string> = {
  approve:
    "the requester's is refused, naming the cap, what the run would spend and what is left, and the run keeps waiting; an approver's starts it past the caps (recorded), its token budget still bounding it",
  amend:
    'the planner is called again, its call reserved against the caps (refused with the cap named when none is left); the new card is judged against them again',
  edit: 'the edited plan is a new revision, judged against the caps again: it still waits while it would pass one',
  cancel: 'the run is cancelled; nothing more is spent',
  pause: 'at the card nothing runs; a run the cap paused mid-run is already paused (refused as such)',
  resume:
    "on a run the cap paused: the requester's asks again (and pauses again while the cap holds no room); an approver's goes on past the caps",
  stop: 'the run stops, finished results kept; its report call is under the same caps (refused: a plain report says why)',
  breakpoint: 'set on steps not yet started, as on any card; the cap still decides who may start the run',
  status: "answered from the database; a reply's classification is a model call under the same caps",
  history: 'answered from the database alone: no model call, nothing spent',
  new: "a new request's planner call is reserved against the same caps (refused with the cap named when none is left)",
};

/**
 * What each action does while an MCP server's question is open (context `questionOpen`): a step's call waits on the
 * question's form in the thread. The oracle's expectations once a driver sets the context up; until then the chat
 * spec test/chat/server-questions-spec.ts drives answer, decline, deadline, a bystander's press and stop on Slack and
 * Discord (against server-everything's trigger-elicitation-request), and test/e2e/console-questions.test.ts the same
 * in the console.
 */
export const QUESTION_OPEN: Record<Action, string> = {
  approve: 'not applicable: the plan already runs',
  amend:
    'a mid-run amendment waits for the steps in flight, the asking one included: the question stays open and its answer (or deadline) ends the call first',
  edit: 'steps that started (the asking one) must stay as they are; the question stays open',
  cancel: 'not applicable: the plan already runs',
  pause:
    'new steps are held; the asking call is in flight and goes on, so the question stays open and can still be answered (driven: no)',
  resume: 'the run goes on; an open question is unaffected',
  stop: 'the call is aborted, the question is cancelled (the server hears cancel) and its message says the run was stopped (driven: chat spec, console)',
  breakpoint: 'set on steps not yet started; the question is unaffected',
  status: 'answered from the database; the asking step shows as running',
  history: 'answered from the database alone; the question and its end are stored with the step (server_questions)',
  new: 'a new request starts its own run; the open question stays with its run and its requester',
};

/**
 * What each action does while a step's call is in flight and its server sends `notifications/progress` (context
 * `progressReporting`): the running step's line on the card shows the latest report, paced to one change a second per
 * call, in memory only. The oracle's expectations once a driver sets the context up; until then
 * test/e2e/console-call-progress.test.ts drives the line while the call runs, the pacing and Stop in the console,
 * test/e2e/slack-call-progress.test.ts the card's edits on Slack, and test/mcp/cancel-in-flight.test.ts the host's
 * side of a Stop (both transports), all against server-everything's trigger-long-running-operation.
 */
export const PROGRESS_REPORTING: Record<Action, string> = {
  approve:
    'at a hold mid-run (the plan already runs): the held steps start; the call in flight goes on and its line keeps moving',
  amend:
    "the amendment waits for the calls in flight, their lines moving meanwhile; the new revision's card shows the step as running until its call's next report",
  edit: "steps that started (the reporting one) stay as they are; the new revision's card shows it as running until its next report",
  cancel:
    'at a review card nothing has been called yet, so nothing reports; on a run that started, stop covers ending it',
  pause: 'new steps are held; the call in flight goes on, and its line keeps moving until it ends',
  resume: 'the run goes on; the reports of calls that start now show as they come',
  stop: 'the call is aborted, and what its server reports after (server-everything keeps reporting) is dropped: no line, no log entry (driven: console)',
  breakpoint: 'set on steps not yet started; the running line is unaffected',
  status:
    "answered from the database: the step shows as running, without the server's latest report (that is in memory, on the card)",
  history: 'answered from the database alone: reports are not stored',
  new: "a new request starts its own run and card; a call's reports stay on its own run's card",
};

/** The contexts each channel's driver can set up; a cell with another context is listed as not driven yet. */
export const DRIVEN: Record<Channel, { contexts: readonly Context[]; shapes: readonly Shape[] }> = {
  console: {
    contexts: [
      'earlyStartOn',
      'earlyStartOff',
      'invalidFirstAnswer',
      'quickAnswerBefore',
      'secondActiveRun',
      'restartBeforeDecision',
      'assistant',
      'workflowFire',
      'secondProcess',
      'spendCapHeld',
    ],
    shapes: ['readOnly', 'readThenWrite', 'fanOut', 'chain', 'held', 'delegate'],
  },
  slack: {
    contexts: [
      'earlyStartOn',
      'earlyStartOff',
      'invalidFirstAnswer',
      'quickAnswerBefore',
      'secondActiveRun',
      'restartBeforeDecision',
      'assistant',
      'workflowFire',
      'secondProcess',
      'spendCapHeld',
    ],
    shapes: ['readOnly', 'readThenWrite', 'fanOut', 'chain', 'held', 'delegate'],
  },
  discord: {
    contexts: [
      'earlyStartOn',
      'earlyStartOff',
      'invalidFirstAnswer',
      'quickAnswerBefore',
      'secondActiveRun',
      'assistant',
      'workflowFire',
      'restartBeforeDecision',
      'secondProcess',
      'spendCapHeld',
    ],
    shapes: ['readOnly', 'readThenWrite', 'fanOut', 'chain', 'held', 'delegate'],
  },
};

/** A cell's fate on one channel. */
export type Planned =
  | { cell: Cell; fate: 'run' }
  | { cell: Cell; fate: 'notApplicable'; reason: string }
  | { cell: Cell; fate: 'notDriven'; reason: string };

/**
 * The cells to run on a channel: the all-pairs covering set over what its driver sets up (seeded, so the same every
 * time), or with `full` the whole product; plus every cell left out, with why.
 */
export function planFor(channel: Channel, o: { full: boolean; seed?: number }): Planned[] {
  const driven = DRIVEN[channel];
  const drivable = (c: Cell) => driven.contexts.includes(c.context) && driven.shapes.includes(c.shape);
  const everything = product(DIMENSIONS);
  const chosen = o.full
    ? everything.filter((c) => drivable(c) && notApplicable(c) === null)
    : allPairs(
        { action: ACTIONS, shape: driven.shapes, context: driven.contexts },
        { seed: o.seed ?? 25, applicable: (c) => notApplicable(c) === null },
      ).cells;
  const run = chosen.map((cell): Planned => ({ cell, fate: 'run' }));
  const left = everything.flatMap((cell): Planned[] => {
    const reason = notApplicable(cell);
    if (reason) return [{ cell, fate: 'notApplicable', reason }];
    if (!drivable(cell))
      return [
        {
          cell,
          fate: 'notDriven',
          reason: `${channel}'s scenario driver does not set up this ${driven.contexts.includes(cell.context) ? 'shape' : 'context'} yet`,
        },
      ];
    return [];
  });
  return [...run, ...left];
}

/** A cell as one line, for test names and the summary. */
export function cellName(c: Cell): string {
  return `${c.action} × ${c.shape} × ${c.context}`;
}

/**
 * What should happen in a cell, as data, from the action and the shape alone (no I/O): how the run ends, which value
 * of the tail step the MCP server receives (if any), and what the person must and must never see. The channel's
 * driver observes; `judge` compares. Target behaviour of issue 25, not merely today's.
 */
import type { RunStatus } from '../../src/engine/types.ts';
import { decisionPoint, type Cell } from './matrix.ts';
import { TAILS } from './plans.ts';

/** The expected outcome of a cell. */
export interface Expectation {
  /** The cell run's status once the action's story is told (before the cell's clean-up stops what is left). */
  status: readonly RunStatus[];
  /** The tail's value the server receives, exactly once; null: the tail never reaches the server. */
  tail: string | null;
  /** The tail must not reach the server before the action's last step (approve after amend, continue, resume). */
  tailHeldUntilLast: boolean;
  /** No MCP call at all reaches the server after the action (stop, cancel). */
  nothingAfter: boolean;
  /** What the person must see after the action, and must never see (each channel's person says how it looks). */
  shows: Seen[];
  neverShows: Seen[];
}

/** Something a person sees, in a channel's own words. */
export type Seen =
  | 'report:completed'
  | 'report:stopped'
  | 'report:any'
  | 'report:assistant'
  | 'revision:1'
  | 'card:child'
  | `breakpoint:${string}`
  | 'breakpoint:any'
  | 'status'
  | 'history'
  | 'paused'
  | 'quickAnswer'
  | 'alreadyEnded'
  | 'invalidStopped'
  // Context spendCapHeld: the card says it waits for an approver; the requester's Approve is refused naming the cap;
  // an approver's is noted as past it.
  | 'spendHeld'
  | 'spendRefused'
  | 'approvedPastCap';

/** The expectation for an action on a shape (the context adds its own checks in the driver). */
export function expectationFor(cell: Cell): Expectation {
  const tail = TAILS[cell.shape];
  const at = decisionPoint(cell);
  const base: Expectation = {
    status: ['completed'],
    tail: tail.planned,
    tailHeldUntilLast: false,
    nothingAfter: false,
    shows: ['report:completed'],
    // "Already ended" is never said while this run is active; an invalid answer is repaired, not a reason to stop.
    neverShows: ['alreadyEnded', 'invalidStopped'],
  };
  const never = (...more: Seen[]) => [...base.neverShows, ...more];
  switch (cell.action) {
    case 'approve':
      // A suggested breakpoint is offered, never set: approve stops at none.
      return { ...base, neverShows: never('breakpoint:any') };
    case 'amend':
      return {
        ...base,
        tail: tail.amended,
        tailHeldUntilLast: at !== 'running',
        shows: ['revision:1', 'report:completed'],
      };
    case 'edit':
      return {
        ...base,
        tail: tail.edited,
        tailHeldUntilLast: at !== 'running',
        shows: ['revision:1', 'report:completed'],
      };
    case 'cancel':
      return { ...base, status: ['cancelled', 'stopped'], tail: null, nothingAfter: true, shows: [] };
    case 'breakpoint':
      return {
        ...base,
        // On a card the breakpoint goes after `think`; once `think` runs, only the tail has not started.
        tailHeldUntilLast: at === 'card',
        shows: [`breakpoint:${at === 'card' ? 'think' : tail.id}`, 'report:completed'],
      };
    case 'pause':
      return { ...base, status: ['paused'], tail: null, shows: ['paused'], neverShows: never('report:any') };
    case 'resume':
      return { ...base, tailHeldUntilLast: true, shows: ['paused', 'report:completed'] };
    case 'stop':
      return { ...base, status: ['stopped'], tail: null, nothingAfter: true, shows: ['report:stopped'] };
    case 'status':
      return { ...base, shows: ['status', 'report:completed'] };
    case 'history':
      return { ...base, shows: ['history', 'report:completed'] };
    case 'new':
      // `new <quick question>`, then `stop`: the stop reaches the run still active, not the finished quick answer.
      return {
        ...base,
        status: ['stopped'],
        tail: null,
        nothingAfter: true,
        shows: ['quickAnswer', 'report:stopped'],
      };
  }
}

/** What a driver saw in a cell. */
export interface Observation {
  status: RunStatus;
  /** The tail values the server received: all, and those before the action's last step. */
  tailValues: string[];
  tailValuesBeforeLast: string[];
  /** Calls the server received after the action (stop, cancel). */
  callsAfter: number;
  /** Whether the person was shown this from the action on (for `shows`), or anywhere from the request on. */
  sees: (what: Seen, since: 'action' | 'request') => boolean;
  /** Report headers shown for the cell run. */
  reports: number;
}

/** The ways an observation falls short of the expectation, as sentences (none: the cell passes). */
export function judge(e: Expectation, o: Observation): string[] {
  const wrong: string[] = [];
  if (!e.status.includes(o.status)) wrong.push(`the run ended ${o.status}, expected ${e.status.join(' or ')}`);
  const tailWanted = e.tail === null ? [] : [e.tail];
  if (JSON.stringify(o.tailValues) !== JSON.stringify(tailWanted))
    wrong.push(
      `the server received the tail step as ${JSON.stringify(o.tailValues)}, expected ${JSON.stringify(tailWanted)}`,
    );
  if (e.tailHeldUntilLast && o.tailValuesBeforeLast.length > 0)
    wrong.push(
      `the tail step reached the server before the person's decision: ${JSON.stringify(o.tailValuesBeforeLast)}`,
    );
  if (e.nothingAfter && o.callsAfter > 0) wrong.push(`${o.callsAfter} MCP call(s) reached the server after the action`);
  for (const p of e.shows) if (!o.sees(p, 'action')) wrong.push(`the person never saw ${p}`);
  for (const p of e.neverShows) if (o.sees(p, 'request')) wrong.push(`the person saw ${p}`);
  if (o.reports > 1) wrong.push(`the report was shown ${o.reports} times`);
  return wrong;
}

/**
 * The dispatcher's state, the events it takes (in the past tense) and the effects it asks for (as commands).
 */
import type { Breakpoint, BreakpointTime } from '../plan/breakpoints.ts';
import type { Plan, Step } from '../plan/plan-schema.ts';
import type { Json, RiskLevel, StepError, StepStatus } from '../types.ts';
import type { StepPolicy } from './step-policies.ts';

/**
 * Why a ready step waits for a person: riskier than approved, unseen arguments, a changed tool definition, added by
 * an amendment, or (`review`) part of a plan that needed review once it had arrived whole, after steps started early.
 */
export interface Hold {
  stepId: string;
  why: 'risk' | 'confirm' | 'changed' | 'amended' | 'review';
  /**
   * The arguments as they would be sent, when they were known as the person was asked (always for `confirm`); a hold
   * approved with them confirms them.
   */
  args?: Json;
}

/** Runtime of one step. */
export interface StepRuntime {
  status: StepStatus;
  attempt: number;
  output?: Json;
  error?: StepError;
  /** Why a step was skipped or never ran, in words. */
  note?: string;
}

/** The dispatcher's state for one run. `phase` `done` is final. */
export interface DispatchState {
  phase: 'running' | 'paused' | 'stopping' | 'halting' | 'done';
  /** Why the run is paused: a person's Pause, or a breakpoint (then `heldAt` names the step). */
  pausedBy: 'user' | 'breakpoint' | null;
  heldAt: string | null;
  /** True while the planner rewrites the steps not yet run: nothing new starts. */
  amending: boolean;
  /**
   * True while the planner is still writing the plan (`early-start.ts`): `plan` holds only the steps let in to start
   * early, more may arrive, so the run cannot end yet. `planCompleted` or Stop ends it.
   */
  streaming?: boolean;
  /** The highest risk a person approved (or auto-approval allowed); riskier steps wait. */
  approvedRisk: RiskLevel;
  /** Steps waiting for a person, those the person was already told about, and those whose arguments they confirmed. */
  holds: Hold[];
  announced: string[];
  confirmed: string[];
  /** Steps the run holds at, before they start or after they end. */
  breakpoints: Breakpoint[];
  /**
   * Steps waiting for the requester to connect a server that connects per person, by step id: the server. Such a
   * step stays pending (its timeout not started) until `connected` names its server; absent when none waits.
   */
  connecting?: Record<string, string>;
  outcome: 'completed' | 'failed' | 'stopped' | null;
  plan: Plan;
  policies: Record<string, StepPolicy>;
  steps: Record<string, StepRuntime>;
  maxParallel: number;
  maxAttempts: number;
  /** The step whose failure halted the run. */
  haltedBy: string | null;
}

export type DispatchEvent =
  | { type: 'stepSucceeded'; stepId: string; attempt: number; output: Json }
  | { type: 'stepFailed'; stepId: string; attempt: number; error: StepError }
  | { type: 'pauseRequested' }
  | { type: 'resumeRequested' }
  | { type: 'stopRequested' }
  | { type: 'breakpointsSet'; stepIds: string[]; on: boolean; when?: BreakpointTime }
  | { type: 'amendStarted' }
  | { type: 'amendEnded' }
  | { type: 'planRevised'; plan: Plan; policies: Record<string, StepPolicy>; approvalNeeded?: string[] }
  | { type: 'holdsApproved'; risk: RiskLevel; policies?: Record<string, StepPolicy> }
  | { type: 'definitionChanged'; stepId: string; attempt: number }
  /** The step's start was not stored: a person's Pause or Stop came first (and reaches the dispatcher on its own). */
  | { type: 'startHeld'; stepId: string; attempt: number }
  /** Right before its call, the requester turned out to have no working connection to the step's server: not sent. */
  | { type: 'connectionNeeded'; stepId: string; attempt: number; server: string }
  /** The requester connected the server: the steps waiting for it may start. */
  | { type: 'connected'; server: string }
  /** While the plan streams: steps let in to start before it is whole, added as pending (an id seen before is kept). */
  | { type: 'stepsArrived'; steps: Step[]; policies: Record<string, StepPolicy> }
  /**
   * The plan arrived whole and valid: it replaces the steps let in early (those that started keep their runtime), up
   * to `approvedRisk` may start, and with `review` every step not started waits for a person (holds `review`).
   */
  | {
      type: 'planCompleted';
      plan: Plan;
      policies: Record<string, StepPolicy>;
      approvedRisk: RiskLevel;
      review: boolean;
    };

/** What the dispatcher asks its runner to do, as commands. */
export type DispatchEffect =
  | { type: 'startStep'; step: Step; attempt: number; args: Json; timeoutMs: number }
  | { type: 'abortStep'; stepId: string; attempt: number }
  /** Store and show how an attempt ended: succeeded, failed (perhaps to be retried), skipped or cancelled. */
  | {
      type: 'recordStepEnd';
      stepId: string;
      attempt: number;
      status: StepStatus;
      detail: string;
      output?: Json;
      error?: StepError;
    }
  /** The run paused at a breakpoint: show the step's output (after it) or what it would send (before it). */
  | { type: 'showBreakpoint'; stepId: string; when: BreakpointTime }
  /** Steps wait for a person's approval; each hold is asked for once. */
  | { type: 'requestApproval'; holds: Hold[] }
  /** A step waits for the requester to connect `server` (their own account): ask them, privately, once per wait. */
  | { type: 'requestConnection'; stepId: string; server: string }
  /**
   * A step's call went out and its server went away before answering, so its tool may have acted, and it is not
   * safe to repeat blindly: store the pause and tell the person (resume runs the step again; stop ends the run).
   */
  | { type: 'holdInterrupted'; stepId: string; error: StepError }
  | { type: 'finishRun'; outcome: 'completed' | 'failed' | 'stopped' };

export interface Transition {
  state: DispatchState;
  effects: DispatchEffect[];
}

/** A fresh dispatch state for an approved plan; feed it to `startDispatch`. */
export function createDispatchState(
  plan: Plan,
  policies: Record<string, StepPolicy>,
  options: {
    maxParallel: number;
    maxAttempts: number;
    approvedRisk?: RiskLevel;
    breakpoints?: Breakpoint[];
    streaming?: boolean;
  },
): DispatchState {
  const steps: Record<string, StepRuntime> = {};
  for (const s of plan.steps) steps[s.id] = { status: 'pending', attempt: 0 };
  return {
    phase: 'running',
    pausedBy: null,
    heldAt: null,
    amending: false,
    ...(options.streaming ? { streaming: true } : {}),
    approvedRisk: options.approvedRisk ?? 'high',
    holds: [],
    announced: [],
    confirmed: [],
    breakpoints: options.breakpoints ?? [],
    outcome: null,
    plan,
    policies,
    steps,
    haltedBy: null,
    maxParallel: options.maxParallel,
    maxAttempts: options.maxAttempts,
  };
}

/**
 * Recurring workflows: the vocabulary and the ports.
 *
 * - workflow: a named plan a person approved once, run again with no planner call; it has an owner (whose runs its
 *   fires are) and a conversation its reports go to.
 * - version: one frozen plan of a workflow, with the tool definitions pinned as at approval and the risk it was
 *   approved at. Editing, amending or saving again adds a version; old ones stay readable.
 * - schedule: a cron expression in an IANA time zone, with what to do about missed and overlapping fires.
 * - fire: one scheduled time of one schedule (or a "run now"), claimed once in the database; it starts a run, holds
 *   one for review, or is skipped, and says which.
 */
import type { PlanEstimate } from './estimate-history.ts';
import type { Plan } from './plan/plan-schema.ts';
import type { Conversation, PinnedTool } from './ports.ts';
import type { Actor, RiskLevel, RunStatus } from './types.ts';

/** Whether a fire runs on the approval given at save (`saved`) or waits for a person each time (`every_fire`). */
export type FireReview = 'saved' | 'every_fire';
/** Missed fires (Steward was down): `skip` them, or run the latest `once` if it is less than one period late. */
export type CatchUp = 'skip' | 'once';
/** A fire while the workflow's previous fire still runs: `skip` it (recorded), or `queue` it until that one ends. */
export type Overlap = 'skip' | 'queue';

/** A saved workflow and its current version. */
export interface StoredWorkflow {
  id: string;
  /** Unique among workflows not deleted: lower-case letters, digits, `-` and `_`, starting with a letter. */
  name: string;
  owner: Actor;
  /** Where its runs' cards and reports go. */
  conversation: Conversation;
  review: FireReview;
  /** The version a fire runs. */
  version: number;
  createdAt: Date;
}

/** A version to add: what a person approved, and how it came to be. */
export interface NewVersion {
  plan: Plan;
  /** The definitions of the plan's tools as approved; a fire whose tools changed since holds for review. */
  pins: PinnedTool[];
  /** The risk this version was approved at; a fire whose plan scores higher now holds for review. */
  risk: RiskLevel;
  /** How it came to be: "saved from run …", "edited by …", "amended by …", "forked from …". */
  note: string;
  /** The run it was saved from, if any. */
  sourceRunId: string | null;
  createdBy: Actor;
}

/** One frozen version of a workflow. */
export interface WorkflowVersion extends NewVersion {
  workflowId: string;
  version: number;
  createdAt: Date;
}

/** A schedule of a workflow. */
export interface StoredSchedule {
  id: string;
  workflowId: string;
  cron: string;
  timeZone: string;
  catchUp: CatchUp;
  overlap: Overlap;
  paused: boolean;
  /** The first scheduled time not yet claimed (null: the expression never fires again). */
  nextFireAt: Date | null;
  createdAt: Date;
}

/** What became of a fire (`failed`: its plan is no longer valid against the tools connected, so its run failed). */
export type FireOutcome = 'started' | 'held' | 'failed' | 'skipped_missed' | 'skipped_overlap' | 'skipped_limit';

/** One fire as recorded, with its run's status when it has a run. */
export interface StoredFire {
  id: string;
  workflowId: string;
  /** Null for a "run now". */
  scheduleId: string | null;
  version: number;
  scheduledAt: Date;
  /** When it was claimed and its run created (its start lateness is `startedAt - scheduledAt`). */
  startedAt: Date;
  outcome: FireOutcome;
  /** Why it was held or skipped (for skipped missed fires, how many were missed), else empty. */
  note: string;
  runId: string | null;
  runStatus: RunStatus | null;
}

/** A schedule due now, with what a fire needs to decide: its workflow, that workflow's current version, and whether
 * a run of an earlier fire of the workflow is still active. */
export interface DueSchedule {
  schedule: StoredSchedule;
  workflow: StoredWorkflow;
  version: WorkflowVersion;
  /** A run of this workflow (any fire) is not finished yet. */
  active: boolean;
  /** The workflow's fires that started a run in the 24 hours before now. */
  firesToday: number;
}

/** A run a fire creates: stored with revision 0 (the version's plan, parameters bound), its lease held by the
 * claiming process, and a `workflowFired` event; in `planning`, or `running` when it is `approved` already. */
export interface FireRun {
  id: string;
  conversation: Conversation;
  requester: Actor;
  request: string;
  plan: Plan;
  /**
   * Set when the fire needs no person (its saved approval still holds): the run is stored `running` at once, with
   * this approved risk, these pins and an `autoApproved` event (carrying the estimate its card shows, for the
   * dashboard to score), in the same statement as the claim.
   */
  approved?: { risk: RiskLevel; pins: PinnedTool[]; estimate?: PlanEstimate };
}

/**
 * One claim: the schedule moves from `expectedNext` to `nextFireAt` (only if it is still at `expectedNext` and not
 * paused or deleted: the race is decided there), and the fire is recorded, with its run when it starts one.
 * A "run now" has no schedule (`scheduleId` null); its fire is recorded as given.
 */
export interface FireClaim {
  scheduleId: string | null;
  expectedNext: Date | null;
  nextFireAt: Date | null;
  fire: {
    id: string;
    workflowId: string;
    version: number;
    scheduledAt: Date;
    outcome: FireOutcome;
    note: string;
    run: FireRun | null;
  };
}

/** A workflow's fields to create it with its version 1. */
export interface NewWorkflow {
  id: string;
  name: string;
  owner: Actor;
  conversation: Conversation;
  review: FireReview;
  first: NewVersion;
}

/** A schedule to add: a stored one before it exists (not paused), with who added it. */
export type NewSchedule = Omit<StoredSchedule, 'paused' | 'createdAt'> & { createdBy: Actor };

/** The most live (not paused, not deleted) schedules one person may have added, and one channel may receive. */
export interface ScheduleCaps {
  perPerson: number;
  perChannel: number;
}

/** No cap: for tools that seed schedules on purpose (tests, the bench). */
export const NO_SCHEDULE_CAPS: ScheduleCaps = {
  perPerson: Number.POSITIVE_INFINITY,
  perChannel: Number.POSITIVE_INFINITY,
};

/** A cap a schedule would pass: the person's or the channel's, how many are live, and the cap. */
export interface ScheduleCapHit {
  over: 'person' | 'channel';
  live: number;
  limit: number;
}

/** Durable state of workflows. Every race (a name taken twice, a version added twice, a fire claimed twice) is
 * decided by a conditional statement or a unique row, never in memory. */
export interface WorkflowStore {
  /** Creates a workflow with version 1; false when the name is taken by a workflow not deleted. */
  createWorkflow(w: NewWorkflow, at: Date): Promise<boolean>;
  /** Adds a version after `expectedVersion` and makes it current; null when the workflow moved on (a race) or is gone. */
  addVersion(workflowId: string, expectedVersion: number, v: NewVersion, at: Date): Promise<number | null>;
  /** A workflow not deleted, by name. */
  getWorkflow(name: string): Promise<StoredWorkflow | null>;
  getVersion(workflowId: string, version: number): Promise<WorkflowVersion | null>;
  /** Every version, oldest first. */
  listVersions(workflowId: string): Promise<WorkflowVersion[]>;
  /** Workflows not deleted, by name. */
  listWorkflows(): Promise<StoredWorkflow[]>;
  setReview(workflowId: string, review: FireReview, at: Date): Promise<void>;
  /** Deletes a workflow and its schedules (rows stay, marked deleted, so its fires and versions remain readable). */
  deleteWorkflow(workflowId: string, at: Date): Promise<void>;

  /** Adds a schedule unless it would pass a cap (then nothing is written, and the cap is answered). */
  addSchedule(s: NewSchedule, at: Date, caps: ScheduleCaps): Promise<ScheduleCapHit | null>;
  /** Schedules not deleted, oldest first. */
  listSchedules(workflowId: string): Promise<StoredSchedule[]>;
  /** Pauses a schedule. */
  pauseSchedule(scheduleId: string, at: Date): Promise<void>;
  /**
   * Resumes a paused schedule from `nextFireAt` (the next time after now: paused time is not caught up), unless it
   * would pass a cap (then it stays paused, and the cap is answered).
   */
  resumeSchedule(
    scheduleId: string,
    nextFireAt: Date | null,
    at: Date,
    caps: ScheduleCaps,
  ): Promise<ScheduleCapHit | null>;
  deleteSchedule(scheduleId: string, at: Date): Promise<void>;

  /** Schedules not paused or deleted whose `nextFireAt` is at or before `now`, earliest first, at most `limit`. */
  dueSchedules(now: Date, limit: number): Promise<DueSchedule[]>;
  /** The earliest `nextFireAt` of any schedule not paused or deleted (null: none). */
  nextDue(): Promise<Date | null>;
  /**
   * Claims fires, in one transaction per call: each claim whose schedule is still at its `expectedNext` (or that has
   * no schedule) records its fire and creates its run (leased to this process for `leaseMs`). Returns the ids of the
   * fires won; a claim another process made first is left out, and nothing of it is written.
   */
  claimFires(claims: readonly FireClaim[], at: Date, leaseMs: number): Promise<string[]>;
  /** The fire that created a run, if one did. */
  fireOfRun(runId: string): Promise<StoredFire | null>;
  /** A workflow's latest fires, newest first. */
  listFires(workflowId: string, limit: number): Promise<StoredFire[]>;

  /** Notes that a run amends version `version` of a workflow (its approval saves a version; it never runs). */
  recordAmendment(a: { runId: string; workflowId: string; version: number }, at: Date): Promise<void>;
  /** The workflow (not deleted) and version a run amends, or null when it amends none. */
  amendmentOf(runId: string): Promise<{ workflow: StoredWorkflow; version: number } | null>;
}

/** Cron expressions in time zones (an adapter over a cron library). */
export interface CronCalendar {
  /** Null when the expression and the zone are valid, else a sentence saying what is wrong. */
  check(cron: string, timeZone: string): string | null;
  /** The next `count` scheduled times strictly after `after` (fewer when the expression runs out). */
  next(cron: string, timeZone: string, after: Date, count: number): Date[];
  /** The latest scheduled time strictly before `before`, or null. */
  previous(cron: string, timeZone: string, before: Date): Date | null;
}

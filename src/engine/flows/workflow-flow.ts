/**
 * What people do with workflows: save an approved run's plan, list and show them, edit (a new version), fork,
 * choose whether fires wait for a person, schedule, pause, resume, delete, and run now. Every answer is a sentence
 * for the person who asked, marked `info` or, for a refusal (which says why), `warning`. Changes are theirs to make only if they own the workflow or are
 * approvers; the database decides every race (a name taken twice, two edits of one version).
 */
import { info, refusal, type CommandAnswer, type WorkflowRequest } from '../channel.ts';
import { jsonTextDepth, MAX_PLAN_DEPTH, TOO_DEEP } from '../plan/json-depth.ts';
import { parseEdit } from '../plan/plan-edit.ts';
import type { Plan } from '../plan/plan-schema.ts';
import { newPins } from '../plan/tool-pins.ts';
import { validatePlan } from '../plan/validate-plan.ts';
import { delegationRefusal } from '../assistant/delegate-tool.ts';
import type { PinnedTool, RunHistory, RunRecords, StoredRun } from '../ports.ts';
import { mayDecide } from '../run/run-actions.ts';
import type { Actor, Json } from '../types.ts';
import { bindFireParams, checkFireParams, fireParamsUsed } from '../workflow/fire-params.ts';
import { firstFireAt } from '../workflow/fire-rules.ts';
import { parseWorkflowCommand, type WorkflowCommand } from '../workflow/workflow-commands.ts';
import { describeScheduled, describeWorkflow, describeWorkflowList } from '../workflow/workflow-text.ts';
import { INTERVAL_SAMPLE, scheduleRefusal, type ScheduleLimits } from '../workflow/schedule-limits.ts';
import type { CronCalendar, NewVersion, ScheduleCapHit, StoredWorkflow, WorkflowStore } from '../workflows.ts';
import type { StewardDeps } from './deps.ts';
import type { WorkflowAmendments } from './workflow-amendments.ts';
import type { WorkflowFires } from './workflow-fires.ts';
import { shortRunId } from '../text.ts';

/** What the commands need. */
export interface WorkflowFlowDeps extends Pick<StewardDeps, 'tools' | 'clock' | 'newId' | 'log'> {
  store: RunRecords & RunHistory;
  workflows: WorkflowStore;
  calendar: CronCalendar;
  approvers: readonly string[];
  /** The zone of a schedule that names none. */
  timeZone: string;
  /** How often schedules may fire, and how many may be live. */
  limits: ScheduleLimits;
}

type Command<K extends WorkflowCommand['kind']> = Extract<WorkflowCommand, { kind: K }>;

/** Answers workflow commands. */
export class WorkflowFlow {
  constructor(
    private readonly deps: WorkflowFlowDeps,
    private readonly fires: WorkflowFires,
    private readonly amendments: WorkflowAmendments,
  ) {}

  /** A command's answer; bad words, a missing workflow or a lost race are answered, never thrown. */
  async command(request: WorkflowRequest): Promise<CommandAnswer> {
    const parsed = parseWorkflowCommand(request.text);
    if (!parsed.ok) return refusal(parsed.error);
    const c = parsed.value;
    if (c.kind === 'list') return this.list(request.actor);
    if (c.kind === 'save') return this.save(c, request);
    const workflow = await this.deps.workflows.getWorkflow(c.name);
    if (!workflow) return refusal(`There is no workflow named "${c.name}". \`workflows\` lists yours.`);
    // A plan may carry what its channel said (arguments, addresses): only its owner and approvers see or touch it.
    if (!this.mayChange(workflow, request.actor)) {
      return refusal(`Only the owner of "${workflow.name}" or an approver can see, change, run or fork it.`);
    }
    switch (c.kind) {
      case 'show':
        return this.show(workflow, c.version);
      case 'fork':
        return this.fork(workflow, c.newName, request);
      case 'runNow':
        return this.runNow(workflow);
      case 'edit':
        return this.edit(workflow, c.json, request.actor);
      case 'amend':
        return this.amendments.amend(workflow, c.text, request.actor);
      case 'review':
        return this.setReview(workflow, c.review);
      case 'delete':
        await this.deps.workflows.deleteWorkflow(workflow.id, this.deps.clock());
        this.fires.soon();
        return info(
          `Deleted workflow "${workflow.name}" and its schedules; its runs and versions stay in the history.`,
        );
      case 'schedule':
        return this.schedule(workflow, c, request.actor);
      case 'scheduleSet':
        return this.setSchedules(workflow, c);
      default:
        return assertNever(c);
    }
  }

  private mayChange(workflow: StoredWorkflow, actor: Actor): boolean {
    return mayDecide({ requester: workflow.owner }, actor, this.deps.approvers);
  }

  /** The workflows this person may see: their own, or every one for an approver. */
  private async list(actor: Actor): Promise<CommandAnswer> {
    const { workflows } = this.deps;
    const all = (await workflows.listWorkflows()).filter((w) => this.mayChange(w, actor));
    const items = await Promise.all(
      all.map(async (workflow) => ({
        workflow,
        schedules: await workflows.listSchedules(workflow.id),
        lastFire: (await workflows.listFires(workflow.id, 1))[0] ?? null,
      })),
    );
    return info(describeWorkflowList(items));
  }

  private async show(workflow: StoredWorkflow, version: number | null): Promise<CommandAnswer> {
    const { workflows } = this.deps;
    const shown = await workflows.getVersion(workflow.id, version ?? workflow.version);
    if (!shown) return refusal(`"${workflow.name}" has no version ${version}; it is at version ${workflow.version}.`);
    const [versions, schedules, fires] = await Promise.all([
      workflows.listVersions(workflow.id),
      workflows.listSchedules(workflow.id),
      workflows.listFires(workflow.id, 10),
    ]);
    return info(describeWorkflow({ workflow, shown, versions, schedules, fires, params: fireParamsUsed(shown.plan) }));
  }

  /** Saves the run's approved plan as a new workflow, or as a new version of the person's workflow of that name. */
  private async save(c: Command<'save'>, request: WorkflowRequest): Promise<CommandAnswer> {
    const { workflows, tools, clock, newId, store } = this.deps;
    const run = await this.runToSave(request);
    if (typeof run === 'string') return refusal(run);
    const plan = run.plan as Plan;
    if (run.assistant)
      return refusal(
        `That run is the Assistant "${run.assistant}"'s, and a workflow's fires do not carry an Assistant's grants yet, so it cannot be saved. Ask Steward itself for the work, then save that run.`,
      );
    const delegates = delegationRefusal(plan);
    if (delegates) return refusal(`That run's plan cannot be saved: ${delegates}.`);
    const v = validatePlan(plan, tools.listTools());
    if (!v.ok) return refusal(`That run's plan is no longer valid, so it cannot be saved: ${v.error.join('; ')}`);
    // The definitions as the person approved them; a tool pinned later (a hold they approved) as pinned then.
    const pinned = new Map((await store.listPins(run.id)).map((p) => [p.tool, p]));
    const pins = [...plannedPins(plan, pinned), ...newPins(plan, tools.listTools(), pinned)];
    const version = { plan, pins, risk: v.value.risk, sourceRunId: run.id, createdBy: request.actor };
    const existing = await workflows.getWorkflow(c.name);
    if (existing) {
      if (!this.mayChange(existing, request.actor)) return refusal(`The name "${c.name}" is taken; choose another.`);
      return this.addVersion(existing, { ...version, note: `saved from run ${shortRunId(run.id)}` });
    }
    const review = c.everyFire || v.value.risk === 'high' ? 'every_fire' : 'saved';
    const created = await workflows.createWorkflow(
      {
        id: newId(),
        name: c.name,
        owner: request.actor,
        conversation: run.conversation,
        review,
        first: { ...version, note: `saved from run ${shortRunId(run.id)}` },
      },
      clock(),
    );
    if (!created) return refusal(`The name "${c.name}" is taken; choose another.`);
    const fires =
      review === 'every_fire'
        ? 'each fire will wait for approval'
        : 'fires run on this approval unless a tool changes or becomes riskier';
    return info(
      `Saved workflow "${c.name}" (version 1) from run ${shortRunId(run.id)}: ${steps(plan)}, risk ${v.value.risk}; ${fires}. Its reports go where that run's did. Schedule it with: schedule ${c.name} "0 9 * * MON" Europe/Berlin`,
    );
  }

  /** The run a save names, or the person's latest approved run (in this conversation if there is one); else why not. */
  private async runToSave(request: WorkflowRequest): Promise<StoredRun | string> {
    const { store } = this.deps;
    const approved = (r: StoredRun | null): r is StoredRun =>
      r !== null && r.plan !== null && r.plan.needsTools && r.approvedRisk !== null;
    if (request.runId) {
      const run = await store.getRun(request.runId);
      if (!run) return 'That run does not exist.';
      if (!mayDecide(run, request.actor, this.deps.approvers))
        return 'Only its requester or an approver can save a run.';
      return approved(run) ? run : 'That run has no approved plan to save.';
    }
    // A run a plan delegated to is part of its parent's work, not a request of the person's own.
    const runs = (await store.listRunsOf(request.actor, { activeOnly: false, limit: 50 })).filter(
      (r) => approved(r) && r.parentRunId === undefined,
    );
    const here = runs.find((r) => sameConversation(r, request));
    return (
      here ??
      runs[0] ??
      'You have no run with an approved plan to save yet: ask for the work, approve it, then save it.'
    );
  }

  private async addVersion(workflow: StoredWorkflow, v: NewVersion): Promise<CommandAnswer> {
    const added = await this.deps.workflows.addVersion(workflow.id, workflow.version, v, this.deps.clock());
    if (added === null)
      return refusal(`"${workflow.name}" changed meanwhile; look at it again (\`workflow ${workflow.name}\`).`);
    return info(
      `Workflow "${workflow.name}" is now at version ${added} (${v.note}): ${steps(v.plan)}, risk ${v.risk}. Its next fires run this version.`,
    );
  }

  /** A new version from the person's JSON: checked like any plan, with sample values in its parameters. */
  private async edit(workflow: StoredWorkflow, json: string, actor: Actor): Promise<CommandAnswer> {
    const { workflows, tools } = this.deps;
    const current = await workflows.getVersion(workflow.id, workflow.version);
    if (!current) return refusal(`"${workflow.name}" has no current version.`);
    if (jsonTextDepth(json, MAX_PLAN_DEPTH + 1) > MAX_PLAN_DEPTH) return refusal(`That edit was refused: ${TOO_DEEP}.`);
    let value: Json;
    try {
      value = JSON.parse(json) as Json;
    } catch (err) {
      return refusal(`An edit takes JSON: ${(err as Error).message}`);
    }
    const parsed = parseEdit(current.plan, value);
    if (!parsed.ok) return refusal(parsed.error);
    const unknown = checkFireParams(parsed.value);
    if (unknown.length > 0) return refusal(`That edit was refused: ${unknown.join('; ')}`);
    const delegates = delegationRefusal(parsed.value);
    if (delegates) return refusal(`That edit was refused: ${delegates}.`);
    const sample = bindFireParams(parsed.value, { time: this.deps.clock(), previous: null, timeZone: 'UTC' });
    const v = validatePlan(sample, tools.listTools());
    if (!v.ok) return refusal(`That edit was refused: ${v.error.join('; ')}`);
    const pins = newPins(parsed.value, tools.listTools(), new Map());
    const note = `edited by ${actor.name ?? actor.id}`;
    return this.addVersion(workflow, {
      plan: parsed.value,
      pins,
      risk: v.value.risk,
      note,
      sourceRunId: null,
      createdBy: actor,
    });
  }

  private async setReview(workflow: StoredWorkflow, review: StoredWorkflow['review']): Promise<CommandAnswer> {
    const { workflows, clock } = this.deps;
    const current = await workflows.getVersion(workflow.id, workflow.version);
    if (review === 'saved' && current?.risk === 'high') {
      return refusal(`"${workflow.name}" is high risk, so every fire waits for approval; that cannot be turned off.`);
    }
    await workflows.setReview(workflow.id, review, clock());
    return info(
      review === 'every_fire'
        ? `Each fire of "${workflow.name}" now waits for approval.`
        : `Fires of "${workflow.name}" now run on the approval given when it was saved (unless a tool changes or becomes riskier).`,
    );
  }

  /** Copies the current version under a new name, owned by the person; an approver's copy of someone else's waits at every fire. */
  private async fork(workflow: StoredWorkflow, newName: string, request: WorkflowRequest): Promise<CommandAnswer> {
    const { workflows, clock, newId } = this.deps;
    const current = await workflows.getVersion(workflow.id, workflow.version);
    if (!current) return refusal(`"${workflow.name}" has no current version.`);
    const review = this.mayChange(workflow, request.actor) ? workflow.review : 'every_fire';
    const first = { ...current, note: `forked from ${workflow.name} v${current.version}`, createdBy: request.actor };
    const created = await workflows.createWorkflow(
      // Reports go where the original's do: a slash command names a channel, not a thread a fire could post in.
      { id: newId(), name: newName, owner: request.actor, conversation: workflow.conversation, review, first },
      clock(),
    );
    if (!created) return refusal(`The name "${newName}" is taken; choose another.`);
    const waits = review === 'every_fire' ? ' Each of its fires waits for your approval.' : '';
    return info(
      `Forked "${workflow.name}" (version ${current.version}) as "${newName}", version 1, reporting where "${workflow.name}" does.${waits}`,
    );
  }

  private async schedule(workflow: StoredWorkflow, c: Command<'schedule'>, actor: Actor): Promise<CommandAnswer> {
    const { workflows, calendar, clock, newId } = this.deps;
    const timeZone = c.timeZone ?? this.deps.timeZone;
    const problem = calendar.check(c.cron, timeZone);
    if (problem) return refusal(`That schedule was refused: ${problem}`);
    const upcoming = calendar.next(c.cron, timeZone, clock(), INTERVAL_SAMPLE);
    const next = upcoming.slice(0, 3);
    if (next.length === 0) return refusal(`That schedule was refused: \`${c.cron}\` never fires again.`);
    const tooOften = scheduleRefusal(c.cron, upcoming, this.deps.limits);
    if (tooOften) return refusal(`That schedule was refused: ${tooOften}`);
    const schedule = {
      id: newId(),
      workflowId: workflow.id,
      cron: c.cron,
      timeZone,
      catchUp: c.catchUp,
      overlap: c.overlap,
      nextFireAt: next[0] as Date,
      createdBy: actor,
    };
    const hit = await workflows.addSchedule(schedule, clock(), this.deps.limits);
    if (hit) return refusal(`That schedule was refused: ${capWords(hit)}`);
    this.fires.soon();
    return info(describeScheduled(workflow.name, { ...schedule, paused: false, createdAt: clock() }, next));
  }

  private async setSchedules(workflow: StoredWorkflow, c: Command<'scheduleSet'>): Promise<CommandAnswer> {
    const { workflows, calendar, clock } = this.deps;
    const all = await workflows.listSchedules(workflow.id);
    if (all.length === 0) return refusal(`"${workflow.name}" has no schedule.`);
    if (c.index !== null && !all[c.index - 1])
      return refusal(`"${workflow.name}" has ${all.length} schedule(s); there is no number ${c.index}.`);
    const chosen = c.index === null ? all : [all[c.index - 1]!];
    let done = 0;
    let held: ScheduleCapHit | null = null;
    for (const s of chosen) {
      if (c.action === 'delete') await workflows.deleteSchedule(s.id, clock());
      else if (c.action === 'pause') await workflows.pauseSchedule(s.id, clock());
      // Resumed from the next time after now: time spent paused is not caught up.
      else if (s.paused) {
        const from = firstFireAt(s.cron, s.timeZone, clock(), calendar);
        held = await workflows.resumeSchedule(s.id, from, clock(), this.deps.limits);
        if (held) break;
      }
      done++;
    }
    this.fires.soon();
    const what = { pause: 'Paused', resume: 'Resumed', delete: 'Deleted' }[c.action];
    const said = `${what} ${done === 1 ? 'the schedule' : `${done} schedules`} of "${workflow.name}".`;
    if (!held) return info(said);
    return refusal(`${done > 0 ? `${said} ` : ''}No more can be resumed: ${capWords(held)}`);
  }

  private async runNow(workflow: StoredWorkflow): Promise<CommandAnswer> {
    const { workflows, calendar, clock } = this.deps;
    const version = await workflows.getVersion(workflow.id, workflow.version);
    if (!version) return refusal(`"${workflow.name}" has no current version.`);
    const [schedule] = await workflows.listSchedules(workflow.id);
    const timeZone = schedule?.timeZone ?? this.deps.timeZone;
    const previous = schedule ? calendar.previous(schedule.cron, timeZone, clock()) : null;
    const fire = await this.fires.runNow(workflow, version, previous, timeZone);
    if (fire.outcome === 'failed') return refusal(`"${workflow.name}" could not run: ${fire.note}`);
    const waits = fire.outcome === 'held' ? '; it waits for approval (the card says why)' : '';
    return info(
      `Running "${workflow.name}" version ${version.version} now (run ${fire.run ? shortRunId(fire.run.id) : '?'})${waits}.`,
    );
  }
}

function assertNever(c: never): never {
  throw new Error(`unhandled workflow command ${JSON.stringify(c)}`);
}

/** The run's own pins of the plan's tools. */
function plannedPins(plan: Plan, pinned: ReadonlyMap<string, PinnedTool>): PinnedTool[] {
  const names = new Set(plan.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])));
  return [...pinned.values()].filter((p) => names.has(p.tool));
}

function steps(plan: Plan): string {
  return plan.steps.length === 1 ? '1 step' : `${plan.steps.length} steps`;
}

/** The run talked where the command came from: the same conversation, or a thread of the channel a slash command named. */
function sameConversation(run: StoredRun, request: WorkflowRequest): boolean {
  const [a, b] = [run.conversation, request.conversation];
  return a.channel === b.channel && (a.key === b.key || a.key.startsWith(`${b.key}:`));
}

/** A cap a schedule would pass, in words: whose, and what to do. */
function capWords(hit: ScheduleCapHit): string {
  const whose =
    hit.over === 'person'
      ? `you have ${hit.live} live schedules, the most one person may have (the operator's STEWARD_SCHEDULES_PER_PERSON)`
      : `the channel this workflow reports to has ${hit.live} live schedules, its most (the operator's STEWARD_SCHEDULES_PER_CHANNEL)`;
  return `${whose}. Pause or delete one first (\`workflows\` lists them).`;
}

/**
 * Read-only views of a run for channels that let people edit it in a form: the plan as stored, and an edit checked
 * exactly as applying it would check it, so a form can show the refusal before anything changes.
 */
import type { EditablePlan, InboundDecision } from '../channel.ts';
import { checkEdit } from '../plan/plan-edit.ts';
import type { RunRecords, StepLog, StoredRun } from '../ports.ts';
import { who } from '../run/run-actions.ts';
import { describeStatus } from '../run/run-status.ts';
import { isSteerable, type Actor, type Json } from '../types.ts';
import type { StewardDeps } from './deps.ts';

/** Reads runs for edit forms; changes nothing. */
export class RunViews {
  constructor(
    private readonly deps: Pick<StewardDeps, 'tools'> & { store: RunRecords & StepLog },
    private readonly mayDecide: (run: StoredRun, actor: Actor) => boolean,
  ) {}

  /** The run's stored plan with its breakpoints and the steps that started; null without a run or a plan. */
  async editablePlan(runId: string): Promise<EditablePlan | null> {
    const run = await this.deps.store.getRun(runId);
    if (!run?.plan) return null;
    return {
      revision: run.revision,
      status: run.status,
      plan: run.plan as unknown as Json,
      breakpoints: run.breakpoints,
      started: await this.started(runId),
    };
  }

  /** Null when the edit would be accepted now; else why not, as the decision itself would say it. */
  async checkEdit(d: InboundDecision): Promise<string | null> {
    const run = await this.deps.store.getRun(d.runId);
    if (!run) return 'That run does not exist.';
    if (!this.mayDecide(run, d.actor)) return `Only ${who(run.requester)} or an approver can edit this run.`;
    if (!isSteerable(run.status)) return `That plan is ${describeStatus(run.status)}; it can no longer be edited.`;
    if (run.revision !== d.revision)
      return `This form shows revision ${d.revision}, but the plan is now at revision ${run.revision}; edit the newest card.`;
    const checked = checkEdit(run.plan, d.plan, this.deps.tools.listTools(), new Set(await this.started(run.id)));
    return checked.ok ? null : checked.error;
  }

  private async started(runId: string): Promise<string[]> {
    return [...new Set((await this.deps.store.listStepAttempts(runId)).map((a) => a.stepId))];
  }
}

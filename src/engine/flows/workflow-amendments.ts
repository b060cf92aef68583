/**
 * Amending a workflow in words: one planner call with the current version and the person's words, written as a run
 * whose plan card waits for review like any amendment (Approve, Amend again, Edit, Cancel). Approving it saves the
 * plan as the workflow's next version and runs nothing; Cancel keeps the version as it was.
 */
import { info, refusal, type CommandAnswer, type InboundDecision } from '../channel.ts';
import { newPins } from '../plan/tool-pins.ts';
import { validatePlan } from '../plan/validate-plan.ts';
import { delegationRefusal } from '../assistant/delegate-tool.ts';
import type { RunRecords, StoredRun } from '../ports.ts';
import { sentence, who } from '../run/run-actions.ts';
import type { Actor } from '../types.ts';
import { fireParamsUsed } from '../workflow/fire-params.ts';
import type { StoredWorkflow, WorkflowStore } from '../workflows.ts';
import type { StewardDeps } from './deps.ts';
import type { PlanWriter } from './planner.ts';
import type { ReviewFlow } from './review-flow.ts';
import type { ReviewTimers } from './review-timers.ts';
import type { RunLeases } from './run-leases.ts';
import type { RunMessages } from './run-messages.ts';

/** What an amendment needs: the ports, the planner, and the owners that show and time a review. */
export interface WorkflowAmendmentsDeps extends Pick<StewardDeps, 'tools' | 'clock' | 'newId'> {
  store: RunRecords;
  workflows: WorkflowStore;
  writePlan: PlanWriter;
  review: ReviewFlow;
  timers: ReviewTimers;
  leases: RunLeases;
  messages: RunMessages;
}

/** Workflow amendments in words. */
export class WorkflowAmendments {
  constructor(private readonly deps: WorkflowAmendmentsDeps) {}

  /** Writes the amended plan and shows it for review in the workflow's conversation; the answer says where. */
  async amend(workflow: StoredWorkflow, text: string, actor: Actor): Promise<CommandAnswer> {
    const { workflows, store, clock, newId, leases, writePlan, review } = this.deps;
    const current = await workflows.getVersion(workflow.id, workflow.version);
    if (!current) return refusal(`"${workflow.name}" has no current version.`);
    const n = current.version;
    // The planner is shown plans it can validate; built-in values are not tools' references.
    if (fireParamsUsed(current.plan).length > 0) {
      return refusal(
        `"${workflow.name}" reads built-in values (${fireParamsUsed(current.plan).join(', ')}), so it is changed as JSON: workflow ${workflow.name} edit {...}`,
      );
    }
    const run = { id: newId(), conversation: workflow.conversation, requester: actor };
    const request = `Amend workflow ${workflow.name} (version ${n}): ${text}`;
    await store.createRun({ ...run, request, at: clock(), leaseMs: leases.ttlMs });
    leases.hold(run.id, 0);
    await workflows.recordAmendment({ runId: run.id, workflowId: workflow.id, version: n }, clock());
    await store.saveRevision(run.id, 0, current.plan, `workflow ${workflow.name} v${n}`, clock());
    const planned = await writePlan(run, request, { plan: current.plan, text });
    if (!planned.ok || !planned.value.plan.needsTools) {
      await store.transition(run.id, ['planning'], 'failed', { at: clock() });
      await leases.release(run.id);
      const why = planned.ok ? 'the amended plan had no steps' : planned.error;
      return refusal(`The amendment could not be written (${why}); "${workflow.name}" stays at version ${n}.`);
    }
    await store.saveRevision(run.id, 1, planned.value.plan, 'amendment 1', clock());
    const note = `Amendment of workflow ${workflow.name} (version ${n}): Approve saves this plan as version ${n + 1} without running it; Cancel keeps version ${n}.`;
    await review.offer(run.id, 1, planned.value, 'planning', 'always', note);
    return info(
      `The amended plan for "${workflow.name}" waits for approval in its conversation: Approve saves it as version ${n + 1}; Cancel keeps version ${n}.`,
    );
  }

  /** Approve on an amendment's card: its plan becomes the workflow's next version; nothing runs. */
  async approve(
    run: StoredRun,
    d: InboundDecision,
    amended: { workflow: StoredWorkflow; version: number },
  ): Promise<string | null> {
    const { workflows, store, clock, tools, timers, leases, messages } = this.deps;
    const { workflow, version } = amended;
    const v = run.plan ? validatePlan(run.plan, tools.listTools()) : null;
    if (!v?.ok) return `The plan is no longer valid: ${v ? v.error.join('; ') : 'there is none'}`;
    const delegates = delegationRefusal(v.value.plan);
    if (delegates)
      return `This amendment cannot become a version of "${workflow.name}": ${delegates}. Amend it again without that.`;
    const event = { type: 'workflowAmended', payload: { workflowId: workflow.id, from: version } };
    const moved = { revision: d.revision, at: clock(), event };
    if (!(await store.transition(run.id, ['awaiting_review'], 'completed', moved))) {
      return `That card shows revision ${d.revision}, which is no longer waiting for approval; use the newest card.`;
    }
    timers.clear(run.id);
    const pins = newPins(v.value.plan, tools.listTools(), new Map());
    const added = await workflows.addVersion(
      workflow.id,
      version,
      {
        plan: v.value.plan,
        pins,
        risk: v.value.risk,
        note: `amended by ${who(d.actor)}`,
        sourceRunId: run.id,
        createdBy: d.actor,
      },
      clock(),
    );
    const said =
      added === null
        ? sentence`Approved by ${d.actor}, but "${workflow.name}" changed since this amendment was written (it is past version ${String(version)}), so nothing was saved; amend it again.`
        : sentence`Approved by ${d.actor}: "${workflow.name}" is now at version ${String(added)} (risk ${v.value.risk}); its next fires run it. Nothing was run now.`;
    await store.setReport(
      run.id,
      added === null ? 'Not saved: the workflow had changed.' : `Saved as version ${added}.`,
      clock(),
    );
    await messages.notice(run, 'info', said);
    await messages.status(run, 'completed');
    await leases.release(run.id);
    return null;
  }
}

/**
 * Whether a fire runs on the approval given when its version was saved, or waits for a person: it waits when the
 * workflow asks so, when the plan is high risk or riskier than it was approved at, or when a tool it calls is not
 * the tool that was approved (its definition changed since its pin, or it has no pin).
 */
import type { Plan } from '../plan/plan-schema.ts';
import { maxRisk } from '../plan/risk.ts';
import { changedDefinition, describeChange } from '../plan/tool-pins.ts';
import type { RiskLevel, ToolInfo } from '../types.ts';
import type { FireReview, WorkflowVersion } from '../workflows.ts';

/** What a fire's review is decided from: the workflow's setting, the version that fires, and the plan as it is now. */
export interface FireReviewInput {
  review: FireReview;
  version: WorkflowVersion;
  /** The plan's risk as scored now, with the tools on offer now. */
  risk: RiskLevel;
  plan: Plan;
  tools: readonly ToolInfo[];
}

/** Whether the fire holds for review, with one sentence per reason (none when it runs). */
export function fireReview({ review, version, risk, plan, tools }: FireReviewInput): {
  hold: boolean;
  reasons: string[];
} {
  const reasons: string[] = [];
  if (review === 'every_fire') reasons.push('The workflow asks for approval at every fire.');
  if (risk === 'high') reasons.push('The plan is high risk: a high-risk plan always waits for a person.');
  if (maxRisk([risk, version.risk]) !== version.risk) {
    reasons.push(`The plan is riskier than when it was saved: ${version.risk} → ${risk}.`);
  }
  const pins = new Map(version.pins.map((p) => [p.tool, p]));
  const names = new Set(plan.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])));
  for (const name of names) {
    const pin = pins.get(name);
    if (!pin) {
      reasons.push(`The tool ${name} was not pinned when the workflow was saved, so no one approved its definition.`);
      continue;
    }
    const now = changedDefinition(pin, tools);
    if (now) {
      const changes = describeChange(pin.definition, now.definition).join('; ');
      reasons.push(`The tool ${name} changed since the workflow was saved: ${changes}.`);
    }
  }
  return { hold: reasons.length > 0, reasons };
}

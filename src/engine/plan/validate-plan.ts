/**
 * Validation before a plan is shown to anyone: it nests within bounds, tools exist and are allowed, the graph is a
 * DAG, references point upstream (and into a `structuredContent` only where the tool's output schema allows), conditions
 * parse, and arguments satisfy each tool's input schema.
 */
import { conditionRefs, parseCondition } from './condition.ts';
import { jsonValueDepth, MAX_PLAN_DEPTH, TOO_DEEP } from './json-depth.ts';
import type { Plan, Step } from './plan-schema.ts';
import { outputPathProblem } from './output-paths.ts';
import { collectRefs, parseReference } from './refs.ts';
import { maxRisk, toolForStep, toolRisk } from './risk.ts';
import type { Result } from '../result.ts';
import { checkToolArgs } from './tool-args-schema.ts';
import type { RiskLevel, ToolInfo } from '../types.ts';

/** A plan that passed validation, with what the engine derives from it. */
export interface ValidatedPlan {
  plan: Plan;
  /** Steps grouped by depth in the DAG: layer 0 has no dependencies. */
  layers: string[][];
  stepRisk: Record<string, RiskLevel>;
  risk: RiskLevel;
  /** Steps whose server connects per person (they run with the requester's own account); absent when none. */
  perPerson?: string[];
  /** Steps on a server whose workspace connection an approver made (they run as the workspace); absent when none. */
  asWorkspace?: string[];
}

/** A validated plan, or every problem found, each naming its step. */
export type ValidationResult = Result<ValidatedPlan, string[]>;

/** Validates a plan against the tools on offer; every problem found is listed, each naming its step. */
export function validatePlan(plan: Plan, tools: readonly ToolInfo[]): ValidationResult {
  // First and alone: the checks below (ajv, references, canonical JSON) recurse into the arguments.
  if (jsonValueDepth(plan, MAX_PLAN_DEPTH) > MAX_PLAN_DEPTH) return { ok: false, error: [TOO_DEEP] };
  const errors: string[] = [];
  const byId = new Map<string, Step>();
  for (const step of plan.steps) {
    if (byId.has(step.id)) errors.push(`step ${step.id}: the id is used twice`);
    byId.set(step.id, step);
  }
  if (plan.needsTools && plan.steps.length === 0) errors.push('the plan needs tools but has no steps');
  const toolByName = new Map(tools.map((t) => [t.name, t]));
  const stepRisk: Record<string, RiskLevel> = {};
  const perPerson: string[] = [];
  const asWorkspace: string[] = [];

  for (const step of plan.steps) {
    for (const dep of step.dependsOn) {
      if (dep === step.id) errors.push(`step ${step.id}: depends on itself`);
      else if (!byId.has(dep)) errors.push(`step ${step.id}: depends on ${dep}, which is not in the plan`);
    }
    stepRisk[step.id] = 'low';
    if (step.kind === 'tool') {
      const tool = toolForStep(toolByName.get(step.tool), step.args);
      if (!tool) {
        errors.push(`step ${step.id}: unknown tool "${step.tool}"${suggest(step.tool, tools)}`);
      } else if (!tool.policy.allowed) {
        errors.push(
          `step ${step.id}: tool "${step.tool}" ${tool.policy.notAllowed ?? 'is not allowed by configuration'}`,
        );
      } else {
        stepRisk[step.id] = toolRisk(tool);
        if (tool.policy.perPerson) perPerson.push(step.id);
        if (tool.policy.asWorkspace) asWorkspace.push(step.id);
        for (const problem of checkToolArgs(tool.inputSchema, step.args)) errors.push(`step ${step.id}: ${problem}`);
      }
    }
  }

  const layers = computeLayers(plan.steps, errors);
  const upstream = layers ? upstreamSets(plan.steps, byId) : null;
  for (const step of plan.steps) checkReferences(step, byId, upstream, errors);
  if (errors.length === 0) for (const step of plan.steps) checkStructuredRefs(step, byId, toolByName, errors);

  if (errors.length > 0) return { ok: false, error: errors };
  const risk = maxRisk(Object.values(stepRisk));
  return {
    ok: true,
    value: {
      plan,
      layers: layers ?? [],
      stepRisk,
      risk,
      ...(perPerson.length > 0 ? { perPerson } : {}),
      ...(asWorkspace.length > 0 ? { asWorkspace } : {}),
    },
  };
}

function checkReferences(
  step: Step,
  byId: ReadonlyMap<string, Step>,
  upstream: Map<string, Set<string>> | null,
  errors: string[],
): void {
  const targets: { text: string; stepId: string | null }[] = [];
  if (step.kind === 'condition') {
    const parsed = parseCondition(step.expression);
    if (!parsed.ok) errors.push(`step ${step.id}: condition: ${parsed.error}`);
    else for (const id of conditionRefs(parsed.value)) targets.push({ text: id, stepId: id });
    for (const id of [...step.ifTrue, ...step.ifFalse]) {
      const target = byId.get(id);
      if (!target || !target.dependsOn.includes(step.id)) {
        errors.push(`step ${step.id}: branch ${id} must be a step that depends on ${step.id}`);
      }
    }
  } else {
    for (const ref of collectRefs(step.args)) {
      const parsed = parseReference(ref.text);
      if (!parsed.ok) errors.push(`step ${step.id}: argument ${ref.at.slice(1) || '(root)'}: ${parsed.error}`);
      else targets.push({ text: ref.text, stepId: parsed.value.stepId });
    }
  }
  for (const t of targets) {
    if (!t.stepId || !byId.has(t.stepId)) {
      errors.push(`step ${step.id}: refers to step ${t.stepId}, which is not in the plan`);
    } else if (upstream && !upstream.get(step.id)?.has(t.stepId)) {
      errors.push(`step ${step.id}: refers to step ${t.stepId}, which is not upstream (add it to dependsOn)`);
    }
  }
}

/**
 * Each reference into a tool step's `structuredContent` against that tool's `outputSchema`: a path the schema rules
 * out would fail at run time, after the steps before it had run, so it is refused now.
 */
function checkStructuredRefs(
  step: Step,
  byId: ReadonlyMap<string, Step>,
  toolByName: ReadonlyMap<string, ToolInfo>,
  errors: string[],
): void {
  if (step.kind === 'condition') return;
  for (const ref of collectRefs(step.args)) {
    const parsed = parseReference(ref.text);
    if (!parsed.ok || parsed.value.path[0] !== 'structuredContent') continue;
    const source = byId.get(parsed.value.stepId);
    const schema = source?.kind === 'tool' ? toolByName.get(source.tool)?.outputSchema : undefined;
    if (!source || source.kind !== 'tool' || !schema) continue;
    const problem = outputPathProblem(schema, parsed.value.path.slice(1));
    if (problem) {
      const where = ref.at.slice(1).replace(/\//g, '.') || '(root)';
      errors.push(`step ${step.id}: argument ${where} reads ${ref.text}, but ${source.tool}'s ${problem}`);
    }
  }
}

/** Kahn's algorithm; records a cycle as an error and returns null when there is one. */
export function computeLayers(steps: readonly Step[], errors: string[] = []): string[][] | null {
  const ids = new Set(steps.map((s) => s.id));
  const level = new Map<string, number>();
  let remaining = steps.filter((s) => s.dependsOn.every((d) => ids.has(d)));
  const unusable = steps.length - remaining.length;
  for (;;) {
    const ready = remaining.filter((s) => s.dependsOn.every((d) => level.has(d)));
    if (ready.length === 0) break;
    for (const s of ready) level.set(s.id, Math.max(-1, ...s.dependsOn.map((d) => level.get(d) as number)) + 1);
    remaining = remaining.filter((s) => !level.has(s.id));
  }
  if (remaining.length > 0) {
    errors.push(`the steps ${remaining.map((s) => s.id).join(', ')} form a dependency cycle`);
    return null;
  }
  if (unusable > 0) return null;
  const layers: string[][] = [];
  for (const s of steps) {
    const l = level.get(s.id) as number;
    (layers[l] ??= []).push(s.id);
  }
  return layers;
}

function upstreamSets(steps: readonly Step[], byId: ReadonlyMap<string, Step>): Map<string, Set<string>> {
  const memo = new Map<string, Set<string>>();
  const visit = (id: string): Set<string> => {
    const known = memo.get(id);
    if (known) return known;
    const set = new Set<string>();
    memo.set(id, set);
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      set.add(dep);
      for (const x of visit(dep)) set.add(x);
    }
    return set;
  };
  for (const s of steps) visit(s.id);
  return memo;
}

function suggest(name: string, tools: readonly ToolInfo[]): string {
  const bare = name.includes('.') ? name.slice(name.indexOf('.') + 1) : name;
  const near = tools.filter((t) => t.tool === bare).map((t) => t.name);
  return near.length > 0 ? ` (did you mean ${near.join(' or ')}?)` : '';
}

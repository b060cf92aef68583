/**
 * A full plan written in the compact form (`compact-plan.ts`): what the planner is shown in an amendment, and what
 * the bench measures. Every default is left out and calls of one tool side by side are one fan-out; a step (or a
 * plan) the compact form cannot say exactly is kept in its full form, which the expansion takes as it is, so
 * `expandCompactPlan(toCompactPlan(p))` is always `p`.
 */
import type { Json } from '../types.ts';
import { canonicalJson } from './canonical-json.ts';
import {
  defaultStepId,
  deriveSummary,
  expandCompactPlan,
  expandCompactStep,
  NO_TOOLS_SUMMARY,
} from './compact-plan.ts';
import { expandConditionRefs, expandValueRefs, shortenConditionRefs, shortenValueRefs } from './compact-refs.ts';
import type { Plan, Step } from './plan-schema.ts';

/** How to write the compact form. */
export interface CompactOptions {
  /**
   * Write every step's id, even the default `s<position>` ones: a planner shown a plan to change may insert or
   * drop steps, which would move the default ids of the steps after them.
   */
  explicitIds?: boolean;
}

/** The compact form of a plan, which expands back to exactly this plan. */
export function toCompactPlan(plan: Plan, options: CompactOptions = {}): Json {
  const compact = compactPlan(plan, options);
  const back = expandCompactPlan(compact);
  return back.ok && canonicalJson(back.value) === canonicalJson(plan) ? compact : plan;
}

type Fields = Record<string, Json>;

function compactPlan(plan: Plan, options: CompactOptions): Fields {
  const tail = {
    ...(plan.risks.length > 0 && { risks: plan.risks }),
    ...(plan.rationale && { why: plan.rationale }),
  };
  if (!plan.needsTools) {
    const summary: Fields = plan.summary === NO_TOOLS_SUMMARY ? {} : { summary: plan.summary };
    return { answer: plan.answer ?? '', ...summary, ...tail };
  }
  const summary: Fields = plan.summary === deriveSummary(plan.steps) ? {} : { summary: plan.summary };
  return {
    steps: foldFanOuts(
      plan.steps,
      plan.steps.map((s, i) => compactStep(s, i, options)),
    ),
    ...summary,
    ...tail,
  };
}

/**
 * Runs of two or more calls of one tool that differ only in their arguments, each with the default id of its place,
 * written as one fan-out ({"tool", "each": [args, ...]}), which expands back to the same steps in the same places.
 */
function foldFanOuts(full: readonly Step[], steps: readonly Json[]): Json[] {
  const out: Json[] = [];
  for (let i = 0; i < steps.length;) {
    const key = fanOutKey(steps[i]);
    const run = new Set([full[i]?.id]);
    let j = i + 1;
    // A call that reads another of the run waits for it: that is a chain, not calls side by side.
    while (
      key !== undefined &&
      j < steps.length &&
      fanOutKey(steps[j]) === key &&
      !full[j]?.dependsOn.some((d) => run.has(d))
    )
      run.add(full[j++]?.id);
    if (j - i < 2) {
      out.push(steps[i] as Json);
      i++;
      continue;
    }
    const calls = steps.slice(i, j) as Fields[];
    const { args: _args, ...shared } = calls[0] as Fields;
    out.push({ ...shared, each: calls.map((s) => s['args'] ?? {}) });
    i = j;
  }
  return out;
}

/** What a compact tool step shares with the others of a fan-out (all but its arguments), or undefined if it can't be in one. */
function fanOutKey(step: Json | undefined): string | undefined {
  if (typeof step !== 'object' || step === null || Array.isArray(step)) return undefined;
  if (typeof step['tool'] !== 'string' || Object.hasOwn(step, 'id') || Object.hasOwn(step, 'kind')) return undefined;
  const { args: _args, ...shared } = step;
  return canonicalJson(shared);
}

function compactStep(step: Step, index: number, options: CompactOptions): Json {
  const candidate = compactCandidate(step, index, options);
  const back = expandCompactStep(candidate, index);
  if (back.ok && canonicalJson(back.value) === canonicalJson(step)) return candidate;
  // The full form, with its kind up front where a reader looks for it.
  const { id, kind, ...rest } = step;
  return { id, kind, ...rest };
}

function compactCandidate(step: Step, index: number, options: CompactOptions): Fields {
  const id: Fields = options.explicitIds || step.id !== defaultStepId(index) ? { id: step.id } : {};
  const after = shortestAfter(step.dependsOn, reads(step));
  const tail = {
    ...(after.length > 0 && { after }),
    ...(step.description && { note: step.description }),
    ...(step.optional && { optional: true }),
  };
  if (step.kind === 'tool') {
    const args = shortenValueRefs(step.args);
    return { ...id, tool: step.tool, ...(Object.keys(step.args).length > 0 && { args }), ...tail };
  }
  if (step.kind === 'llm') return { ...id, llm: shortenValueRefs(step.args.prompt), ...tail };
  return {
    ...id,
    if: shortenConditionRefs(step.expression),
    ...(step.ifTrue.length > 0 && { then: step.ifTrue }),
    ...(step.ifFalse.length > 0 && { else: step.ifFalse }),
    ...tail,
  };
}

/** The steps a step's references read, in order of appearance (what the expansion adds to "after"). */
function reads(step: Step): string[] {
  if (step.kind === 'condition') {
    const cond = expandConditionRefs(step.expression);
    return cond.ok ? cond.value.stepIds : [];
  }
  const refs = expandValueRefs(step.kind === 'tool' ? step.args : step.args.prompt);
  return refs.ok ? refs.value.stepIds : [];
}

/** The shortest head of `dependsOn` that, with the steps read added after it, gives `dependsOn` back in order. */
function shortestAfter(dependsOn: readonly string[], read: readonly string[]): string[] {
  for (let k = 0; k < dependsOn.length; k++) {
    const head = dependsOn.slice(0, k);
    const rebuilt = [...new Set([...head, ...read])];
    if (rebuilt.length === dependsOn.length && rebuilt.every((d, i) => d === dependsOn[i])) return head;
  }
  return [...dependsOn];
}

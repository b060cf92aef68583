/**
 * `npx tsx bench/plan-tokens.ts`: the planner's output tokens per bench task, in the full plan form the fake planner
 * wrote before the compact form, in the compact form it writes now, and what a tool-calling model emits for the
 * same tool calls (OpenAI `tool_calls`, one assistant turn per layer of the DAG). Tokens are counted as the fake
 * counts them (a quarter of the characters, rounded up). Prints a Markdown table.
 */
import { computeLayers } from '../src/engine/plan/validate-plan.ts';
import type { Json } from '../src/engine/types.ts';
import { planFor, taskPlan } from './fake-model.ts';
import type { GeneratedFile } from './fs-tree.ts';
import { countTokens } from './latency-model.ts';
import { createTasks, type BenchTask } from './tasks.ts';

/** One task's figures. */
export interface PlanTokens {
  task: string;
  steps: number;
  /** The full form, as the fake planner wrote it before (ids, kinds, descriptions, rationale, summary first). */
  full: number;
  compact: number;
  /** OpenAI `tool_calls` as sent on the wire: ids, types, names, arguments as JSON strings. */
  toolCalls: number;
  /** What the model itself generates of those calls: the names and argument strings (ids come from the server). */
  toolCallsGenerated: number;
}

/** The full-form plan the fake planner wrote before the compact form, for comparison. */
export function fullPlanFor(task: BenchTask): string {
  const steps = task.steps.map((s) => ({
    id: s.id,
    kind: s.kind,
    ...(s.kind === 'tool' ? { tool: s.tool } : {}),
    args: s.args,
    dependsOn: s.dependsOn,
    description: s.description,
    optional: false,
  }));
  const parallel = task.steps.filter((s) => s.dependsOn.length === 0).length > 1;
  const rationale = parallel
    ? 'Independent steps run in parallel; the report adds up the results.'
    : 'Each step needs the one before it.';
  return JSON.stringify({ summary: task.summary, rationale, needsTools: true, answer: null, risks: [], steps });
}

/**
 * The tool calls a tool-calling model makes for the task's tool steps, one turn per layer. llm steps have no call:
 * such a model reads the output itself. Arguments keep the plan's references (short form) where the model would
 * write the value it read; for these tasks the two are of similar length.
 */
export function toolCallTurns(task: BenchTask): { wire: string; generated: string }[] {
  const plan = taskPlan(task);
  const byId = new Map(task.steps.map((s) => [s.id, s]));
  return (computeLayers(plan.steps) ?? []).flatMap((layer, n) => {
    const calls = layer.flatMap((id) => {
      const s = byId.get(id);
      return s && s.kind === 'tool'
        ? [{ name: s.tool.replace('.', '__'), args: JSON.stringify(shortRefs(s.args)) }]
        : [];
    });
    if (calls.length === 0) return [];
    const wire = calls.map((c, i) => ({
      id: `call_${String(n).padStart(2, '0')}${String(i).padStart(2, '0')}AbCdEfGhIjKlMnOpQrSt`,
      type: 'function',
      function: { name: c.name, arguments: c.args },
    }));
    return [{ wire: JSON.stringify(wire), generated: calls.map((c) => `${c.name}${c.args}`).join('') }];
  });
}

/** Figures for every bench task. */
export function planTokens(): PlanTokens[] {
  const files: GeneratedFile[] = Array.from({ length: 4 }, (_, i) => ({
    path: `/tmp/steward-bench-fs-Ab12Cd/docs/doc-${i + 1}.txt`,
    title: `doc-${i + 1} 0a1b2c`,
    checksum: '0a1b2c3d4e5f',
  }));
  return createTasks(1, files).map((task) => {
    const turns = toolCallTurns(task);
    return {
      task: task.id,
      steps: task.steps.length,
      full: countTokens(fullPlanFor(task)),
      compact: countTokens(planFor(task)),
      toolCalls: turns.reduce((n, t) => n + countTokens(t.wire), 0),
      // About three tokens per call for the special tokens that frame it.
      toolCallsGenerated: turns.reduce((n, t) => n + countTokens(t.generated), 0) + 3 * countCalls(task),
    };
  });
}

/** The table as Markdown, with totals and ratios. */
export function renderPlanTokens(rows: readonly PlanTokens[]): string {
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '—');
  const head = [
    '| task | steps | full plan | compact plan | compact ÷ full | tool_calls (wire) | compact ÷ wire | tool calls generated | compact ÷ generated |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const line = (r: PlanTokens) =>
    `| ${r.task} | ${r.steps} | ${r.full} | ${r.compact} | ${ratio(r.compact, r.full)} | ${r.toolCalls} | ${ratio(r.compact, r.toolCalls)} | ${r.toolCallsGenerated} | ${ratio(r.compact, r.toolCallsGenerated)} |`;
  const sum = (k: keyof Omit<PlanTokens, 'task'>) => rows.reduce((n, r) => n + r[k], 0);
  const total: PlanTokens = {
    task: '**all tasks**',
    steps: sum('steps'),
    full: sum('full'),
    compact: sum('compact'),
    toolCalls: sum('toolCalls'),
    toolCallsGenerated: sum('toolCallsGenerated'),
  };
  return [...head, ...rows.map(line), line(total)].join('\n');
}

function countCalls(task: BenchTask): number {
  return task.steps.filter((s) => s.kind === 'tool').length;
}

function shortRefs(args: Record<string, Json>): Json {
  return JSON.parse(JSON.stringify(args).replace(/"steps\.([A-Za-z][\w-]*)\.output/g, '"$1')) as Json;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${renderPlanTokens(planTokens())}\n`);
}

/**
 * Big tool catalogs (issue 13, item 5): the planner's prompt with 20 tools connected against 500, for every bench
 * task's request. The 20 are the bench's own tools (every tool a task's plan uses, then the others in catalog
 * order); the 500 are all of the bench's real tools plus distractors from six servers (`distractor-tools.ts`).
 * Prompt tokens are counted as the fake LLM counts them, a quarter of the characters (system prompt and request),
 * and the selection must keep every tool the task's plan uses, so that the planner can choose the same plan.
 */
import { plannerSystemPrompt, plannerUserPrompt } from '../src/engine/plan/planner-prompt.ts';
import { DEFAULT_PLANNER_TOOLS, selectTools } from '../src/engine/plan/tool-selection.ts';
import type { ToolInfo } from '../src/engine/types.ts';
import { distractorTools } from './distractor-tools.ts';
import { header, int, median, row } from './stats.ts';
import type { BenchTask } from './tasks.ts';

/** One task's prompt at both catalog sizes. */
export interface CatalogSizeRow {
  section: 'catalog-size';
  task: string;
  tokens20: number;
  tokens500: number;
  offered500: number;
  /** Tools the task's plan uses that the 500-tool selection left out. */
  missing: string[];
  /** The same with the bench's own catalog, over the limit too, as the rest of the bench runs it. */
  missingOwn: string[];
}

/** The rows, the section's Markdown, and the target's verdict. */
export interface CatalogSizeResult {
  rows: CatalogSizeRow[];
  markdown: string[];
  /** The largest ratio of 500-tool to 20-tool prompt tokens over the tasks. */
  worstRatio: number;
  /** Tasks whose plan uses a tool the selection left out. */
  missed: number;
}

const SMALL = 20;
const LARGE = 500;

/** Measures every task's planner prompt with `SMALL` and `LARGE` tools connected, out of the bench's `real` tools. */
export function benchCatalogSize(
  real: readonly ToolInfo[],
  tasks: readonly BenchTask[],
  limit = DEFAULT_PLANNER_TOOLS,
): CatalogSizeResult {
  const used = new Set(tasks.flatMap((t) => t.steps.filter((s) => s.kind === 'tool').map((s) => s.tool)));
  const small = smallCatalog(real, used);
  const large = [...real, ...distractorTools(LARGE - real.length)];
  const rows = tasks.map((task): CatalogSizeRow => {
    const query = { request: task.request };
    const offered = selectTools(large, query, limit);
    return {
      section: 'catalog-size',
      task: task.id,
      tokens20: promptTokens(task.request, selectTools(small, query, limit)),
      tokens500: promptTokens(task.request, offered),
      offered500: offered.length,
      missing: leftOut(task, offered),
      missingOwn: leftOut(task, selectTools(real, query, limit)),
    };
  });
  const ratios = rows.map((r) => r.tokens500 / r.tokens20);
  const worstRatio = Math.max(...ratios);
  const missed = rows.filter((r) => r.missing.length + r.missingOwn.length > 0).length;
  const sizes = { small: small.length, own: real.length, large: large.length };
  return { rows, worstRatio, missed, markdown: markdown(rows, sizes, limit, ratios) };
}

/** The tools every task uses, then the bench's other tools in catalog order, up to `SMALL`, in catalog order. */
function smallCatalog(real: readonly ToolInfo[], used: ReadonlySet<string>): ToolInfo[] {
  const others = real.filter((t) => !used.has(t.name)).slice(0, Math.max(0, SMALL - used.size));
  const keep = new Set([...used, ...others.map((t) => t.name)]);
  return real.filter((t) => keep.has(t.name));
}

/** The tools the task's plan uses that are not among those offered. */
function leftOut(task: BenchTask, offered: readonly ToolInfo[]): string[] {
  const names = new Set(offered.map((t) => t.name));
  return [...new Set(task.steps.filter((s) => s.kind === 'tool' && !names.has(s.tool)).map((s) => s.tool))];
}

function promptTokens(request: string, offered: readonly ToolInfo[]): number {
  const chars = plannerSystemPrompt(offered).length + plannerUserPrompt({ request, tools: offered }).length;
  return Math.ceil(chars / 4);
}

type Sizes = { small: number; own: number; large: number };

function markdown(rows: CatalogSizeRow[], n: Sizes, limit: number, ratios: number[]): string[] {
  const kept = (missing: string[]) => (missing.length ? `✘ ${missing.join(', ')}` : '✔');
  return [
    '## Big tool catalogs',
    '',
    `The planner's prompt (system prompt and request, 4 characters a token) for each task with ${n.small} tools connected and with ${n.large} (the bench's ${n.own} and distractors from six servers that are never connected), the planner shown at most ${limit} (STEWARD_PLANNER_TOOLS). "kept" says whether the selection kept every tool the task's plan uses, out of ${n.large} tools and out of the bench's own ${n.own}.`,
    '',
    ...header([
      'task',
      `tokens, ${n.small} tools`,
      `tokens, ${n.large} tools`,
      'ratio',
      'offered',
      'kept',
      `kept, ${n.own}`,
    ]),
    ...rows.map((r, i) =>
      row([
        r.task,
        int(r.tokens20),
        int(r.tokens500),
        `${(ratios[i] ?? NaN).toFixed(2)}×`,
        String(r.offered500),
        kept(r.missing),
        kept(r.missingOwn),
      ]),
    ),
    '',
    `Median ratio ${median(ratios).toFixed(2)}×, largest ${Math.max(...ratios).toFixed(2)}×.`,
  ];
}

/**
 * What the quick-answer loop may offer the model (pure): only tools that may start before anyone has seen a plan, by
 * the same test as the early-start gate (`startsEarly`: allowed, read-only and closed-world after mcp.json overrides,
 * low risk, not sensitive; never a tool of a server that connects per person), and one routing tool, `plan_request`, that hands the request to the planner.
 *
 * Providers take tool names matching `^[a-zA-Z0-9_-]{1,64}$`; MCP names are `<server>.<tool>` and may hold other
 * characters. Each offered tool gets a provider name, and the map back is the only way a model's call reaches a tool:
 * a name that is not in it is refused.
 */
import type { LlmToolSpec } from '../ports.ts';
import { selectTools } from '../plan/tool-selection.ts';
import { startsEarly } from './early-start.ts';
import type { ToolInfo } from '../types.ts';

/** The routing tool: the request needs side effects or several dependent steps. */
export const PLAN_REQUEST_TOOL = 'plan_request';

/**
 * Most tools offered to one quick answer. Every turn carries the whole list (the planner's catalog is sent once), so it
 * is kept short: a lookup needs few tools, and the request's own words pick them.
 */
export const QUICK_TOOLS = 8;

/** The tools a quick answer may call; with `request`, narrowed to those that fit it (as the planner's are). */
export function quickTools(all: readonly ToolInfo[], request?: string, limit = QUICK_TOOLS): ToolInfo[] {
  // A server that connects per person may first need the requester to connect, which only a planned run waits for.
  const quick = all.filter((t) => startsEarly(t) && t.policy.perPerson !== true);
  return request === undefined ? quick : selectTools(quick, { request }, limit);
}

/** Provider names of the offered tools, both ways. */
export interface ToolNameMap {
  /** Provider name → qualified MCP name. */
  toTool: ReadonlyMap<string, string>;
  /** Qualified MCP name → provider name. */
  toProvider: ReadonlyMap<string, string>;
}

const MAX_NAME = 64;

/**
 * Gives each tool a provider-safe name: `.` becomes `__`, any other character outside `[a-zA-Z0-9_-]` becomes `_`,
 * cut to 64; a name already taken (or `plan_request`) gets a numbered suffix. Deterministic for the same tool list.
 */
export function createToolNameMap(tools: readonly Pick<ToolInfo, 'name'>[]): ToolNameMap {
  const toTool = new Map<string, string>();
  const toProvider = new Map<string, string>();
  const taken = new Set([PLAN_REQUEST_TOOL]);
  for (const { name } of tools) {
    if (toProvider.has(name)) continue;
    const base =
      name
        .replaceAll('.', '__')
        .replace(/[^a-zA-Z0-9_-]/g, '_')
        .slice(0, MAX_NAME) || 'tool';
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) {
      const suffix = `_${n}`;
      candidate = base.slice(0, MAX_NAME - suffix.length) + suffix;
    }
    taken.add(candidate);
    toTool.set(candidate, name);
    toProvider.set(name, candidate);
  }
  return { toTool, toProvider };
}

/** The tool list sent to the model: each quick tool under its provider name, then `plan_request`. */
export function quickToolSpecs(tools: readonly ToolInfo[], names: ToolNameMap): LlmToolSpec[] {
  const specs: LlmToolSpec[] = [];
  for (const t of tools) {
    const name = names.toProvider.get(t.name);
    if (name === undefined) continue;
    const description = `${t.name}: ${t.description}`.slice(0, 1000);
    specs.push({ name, description, inputSchema: t.inputSchema });
  }
  specs.push({
    name: PLAN_REQUEST_TOOL,
    description:
      'The request needs a side effect (sending, writing, changing anything) or several dependent steps: hand it ' +
      'to the planner, which writes a plan for a person to review. Call it alone.',
    inputSchema: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why it needs a plan, in one sentence.' } },
    },
  });
  return specs;
}

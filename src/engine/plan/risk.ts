/**
 * Risk from MCP tool annotations. Absent annotations take the spec's defaults (not read-only, destructive,
 * open-world), so an unannotated tool is high risk. The operator's config overrides everything.
 */
import type { Json, RiskLevel, ToolInfo } from '../types.ts';

const ORDER: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2 };

/** Risk of calling one tool. */
export function toolRisk(tool: ToolInfo): RiskLevel {
  if (tool.policy.risk) return tool.policy.risk;
  const a = tool.annotations;
  if (a.readOnlyHint === true) return 'low';
  if (a.destructiveHint === false) return 'medium';
  return 'high';
}

/** Whether a failed or interrupted call may be sent again: read-only or declared idempotent, unless config says. */
export function isIdempotent(tool: ToolInfo): boolean {
  return tool.policy.idempotent ?? (tool.annotations.readOnlyHint === true || tool.annotations.idempotentHint === true);
}

/**
 * Whether values flowing into this tool from earlier outputs need a person's eyes: destructive or open-world
 * tools (absent annotations count as both, per the spec), or tools the config marks sensitive.
 */
export function guardsDataFlow(tool: ToolInfo): boolean {
  if (tool.policy.sensitive !== undefined) return tool.policy.sensitive;
  const a = tool.annotations;
  const destructive = a.readOnlyHint !== true && a.destructiveHint !== false;
  return destructive || a.openWorldHint !== false;
}

/** The highest of several risks (low when there are none). */
export function maxRisk(levels: Iterable<RiskLevel>): RiskLevel {
  let top: RiskLevel = 'low';
  for (const level of levels) if (ORDER[level] > ORDER[top]) top = level;
  return top;
}

/** True when `a` is riskier than `b`. */
export function riskAbove(a: RiskLevel, b: RiskLevel): boolean {
  return ORDER[a] > ORDER[b];
}

/**
 * The tool a step calls as scored for that step: for a tool with variants per server (`byServer`), the one of the
 * server the step names; a server given by a reference (or one no longer offered) keeps the most open one.
 */
export function toolForStep(tool: ToolInfo | undefined, args: Record<string, Json>): ToolInfo | undefined {
  if (!tool?.byServer) return tool;
  const server = args.server;
  return (typeof server === 'string' && tool.byServer[server]) || tool;
}

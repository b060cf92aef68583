/** Per-step facts the dispatcher needs from the tool catalog: retry safety, timeout, risk and data-flow guards. */
import type { Plan } from '../plan/plan-schema.ts';
import { guardsDataFlow, isIdempotent, toolForStep, toolRisk } from '../plan/risk.ts';
import type { RiskLevel, ToolInfo } from '../types.ts';
import { BUILTIN_SERVER } from './earlier-turns.ts';

/** Timeout of steps with no tool policy (llm steps), and the fallback for any step. */
export const DEFAULT_STEP_TIMEOUT_MS = 120_000;

/** What the dispatcher knows about one step's tool. */
export interface StepPolicy {
  idempotent: boolean;
  timeoutMs: number;
  risk: RiskLevel;
  /** Arguments filled from earlier outputs need the person's confirmation (destructive, open-world or sensitive tools). */
  guardRefs: boolean;
  /** Top-level argument fields exempt from that confirmation. */
  trustedRefFields: string[];
  /** Most calls the step's server takes at once (its `maxConcurrency`); unset: see `serialWrite`. */
  serverMaxConcurrency?: number;
  /**
   * The step may write and its server sets no `maxConcurrency`: it runs while no other such step of its server runs
   * (the host holds the same rule across runs). Read-only steps never wait for it.
   */
  serialWrite?: true;
  /** The step's server connects per person: it runs under the requester's own connection, checked before the call. */
  perPerson?: true;
}

/** Policies for every step of a plan, from the tool catalog as it is now (a tool gone from it counts as unsafe). */
export function policiesFor(plan: Plan, tools: readonly ToolInfo[]): Record<string, StepPolicy> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const out: Record<string, StepPolicy> = {};
  for (const s of plan.steps) {
    const tool = s.kind === 'tool' ? toolForStep(byName.get(s.tool), s.args) : undefined;
    out[s.id] = {
      idempotent: tool ? isIdempotent(tool) : false,
      timeoutMs: tool?.policy.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
      risk: tool ? toolRisk(tool) : 'low',
      guardRefs: tool ? guardsDataFlow(tool) : false,
      trustedRefFields: tool?.policy.trustedRefFields ?? [],
      ...(tool?.policy.maxConcurrency !== undefined ? { serverMaxConcurrency: tool.policy.maxConcurrency } : {}),
      ...(tool && isServerWrite(tool) ? { serialWrite: true as const } : {}),
      ...(tool?.policy.perPerson ? { perPerson: true as const } : {}),
    };
  }
  return out;
}

/**
 * A call that may write to an MCP server with no `maxConcurrency`: one at a time per server. Steward's own tools
 * (`steward.delegate`, `steward.step_output`) are not a server's state, and run as the plan allows.
 */
function isServerWrite(tool: ToolInfo): boolean {
  return (
    tool.server !== BUILTIN_SERVER && tool.policy.maxConcurrency === undefined && tool.annotations.readOnlyHint !== true
  );
}

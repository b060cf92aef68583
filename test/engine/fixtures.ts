/** Builders for engine tests: tools and plans with overrides. */
import type { Plan } from '../../src/engine/plan/plan-schema.ts';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import type { ToolInfo } from '../../src/engine/types.ts';

/** A tool as the MCP host would report it. */
export function createTool(name: string, overrides: Partial<ToolInfo> = {}): ToolInfo {
  const [server = 'srv', tool = name] = name.split(/\.(.*)/s);
  return {
    name,
    server,
    tool,
    description: `the ${tool} tool`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    annotations: { readOnlyHint: true },
    fingerprint: `fp-${name}`,
    definition: { name },
    ...overrides,
    policy: { allowed: true, timeoutMs: 1000, ...overrides.policy },
  };
}

/** A plan parsed through the real schema, so defaults apply as they do for the planner's output. */
export function createPlan(steps: unknown[], overrides: Record<string, unknown> = {}): Plan {
  return planSchema.parse({ summary: 'test plan', needsTools: true, steps, ...overrides });
}

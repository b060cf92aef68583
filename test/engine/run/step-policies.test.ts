import { describe, expect, it } from 'vitest';
import { policiesFor } from '../../../src/engine/run/step-policies.ts';
import { createPlan, createTool } from '../fixtures.ts';

describe('policiesFor', () => {
  it("gives a tool step its server's maxConcurrency, and no limit to other steps", () => {
    const plan = createPlan([
      { id: 'a', tool: 'narrow.x' },
      { id: 'b', tool: 'wide.x' },
      { id: 'c', kind: 'llm', args: { prompt: 'p' } },
    ]);
    const tools = [
      createTool('narrow.x', { policy: { allowed: true, timeoutMs: 1000, maxConcurrency: 2 } }),
      createTool('wide.x'),
    ];
    const policies = policiesFor(plan, tools);
    expect(policies.a?.serverMaxConcurrency).toBe(2);
    expect(['b', 'c'].map((id) => policies[id]?.serverMaxConcurrency)).toEqual([undefined, undefined]);
  });

  it('marks a step that may write to a server without maxConcurrency as one at a time; not a read, a limited write, or a delegation', () => {
    const plan = createPlan([
      { id: 'write', tool: 'memory.create' },
      { id: 'unsaid', tool: 'memory.unsaid' },
      { id: 'read', tool: 'memory.read' },
      { id: 'limited', tool: 'narrow.write' },
      { id: 'think', kind: 'llm', args: { prompt: 'p' } },
      { id: 'child', tool: 'steward.delegate' },
    ]);
    const tools = [
      createTool('steward.delegate', { annotations: {} }),
      createTool('memory.create', { annotations: { readOnlyHint: false } }),
      createTool('memory.unsaid', { annotations: {} }),
      createTool('memory.read'),
      createTool('narrow.write', {
        annotations: { readOnlyHint: false },
        policy: { allowed: true, timeoutMs: 1000, maxConcurrency: 3 },
      }),
    ];
    const policies = policiesFor(plan, tools);
    expect(['write', 'unsaid', 'read', 'limited', 'think', 'child'].map((id) => policies[id]?.serialWrite)).toEqual([
      true,
      true,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

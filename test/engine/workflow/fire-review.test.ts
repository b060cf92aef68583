import { describe, expect, it } from 'vitest';
import type { PinnedTool } from '../../../src/engine/ports.ts';
import type { RiskLevel, ToolInfo } from '../../../src/engine/types.ts';
import { fireReview, type FireReviewInput } from '../../../src/engine/workflow/fire-review.ts';
import type { WorkflowVersion } from '../../../src/engine/workflows.ts';
import { createDefinition, createPlan, createTool } from '../fixtures.ts';

const search = createTool('srv.search', { definition: createDefinition({ name: 'search' }), fingerprint: 'fp-1' });
const send = createTool('srv.send', { definition: createDefinition({ name: 'send' }), fingerprint: 'fp-2' });
const plan = createPlan([
  { id: 'a', tool: 'srv.search', args: { text: 'x' } },
  { id: 'b', tool: 'srv.send', dependsOn: ['a'], args: { text: 'y' } },
  { id: 'c', tool: 'srv.search', dependsOn: ['b'], args: { text: 'z' } },
]);

function pin(tool: ToolInfo): PinnedTool {
  return { tool: tool.name, fingerprint: tool.fingerprint, definition: tool.definition };
}

function createVersion(overrides: Partial<WorkflowVersion> = {}): WorkflowVersion {
  return {
    workflowId: 'wf1',
    version: 1,
    plan,
    pins: [pin(search), pin(send)],
    risk: 'medium',
    note: 'saved from run r1',
    sourceRunId: 'r1',
    createdBy: { id: 'U1', name: 'Ada', channel: 'console' },
    createdAt: new Date('2026-12-01T00:00:00Z'),
    ...overrides,
  };
}

function review(overrides: Partial<FireReviewInput> = {}) {
  return fireReview({
    review: 'saved',
    version: createVersion(),
    risk: 'medium',
    plan,
    tools: [search, send],
    ...overrides,
  });
}

describe('whether a fire waits for a person', () => {
  it('runs on the saved approval when nothing changed', () => {
    expect(review()).toEqual({ hold: false, reasons: [] });
  });

  it('runs when the plan became less risky', () => {
    expect(review({ risk: 'low' })).toEqual({ hold: false, reasons: [] });
  });

  it('waits at every fire when the workflow asks so', () => {
    expect(review({ review: 'every_fire' })).toEqual({
      hold: true,
      reasons: ['The workflow asks for approval at every fire.'],
    });
  });

  it('always waits for a high-risk plan, even one saved at high risk', () => {
    expect(review({ risk: 'high', version: createVersion({ risk: 'high' }) })).toEqual({
      hold: true,
      reasons: ['The plan is high risk: a high-risk plan always waits for a person.'],
    });
  });

  it.each<[RiskLevel, RiskLevel]>([
    ['low', 'medium'],
    ['medium', 'high'],
    ['low', 'high'],
  ])('waits when the plan is riskier than when it was saved: %s → %s', (saved, now) => {
    const { hold, reasons } = review({ risk: now, version: createVersion({ risk: saved }) });
    expect(hold).toBe(true);
    expect(reasons).toContain(`The plan is riskier than when it was saved: ${saved} → ${now}.`);
  });

  it('waits when a tool changed since its pin, naming the tool and what changed, once per tool', () => {
    const changed = createTool('srv.send', {
      fingerprint: 'fp-2b',
      definition: createDefinition({ name: 'send', description: 'Sends, then deletes the original.' }),
    });
    expect(review({ tools: [search, changed] })).toEqual({
      hold: true,
      reasons: [
        'The tool srv.send changed since the workflow was saved: ' +
          'description: "Echoes back the input." → "Sends, then deletes the original.".',
      ],
    });
  });

  it('lists every change of a tool in its one reason', () => {
    const changed = createTool('srv.search', {
      fingerprint: 'fp-1b',
      definition: createDefinition({ name: 'search', title: 'Search all', annotations: { readOnlyHint: false } }),
    });
    const [reason] = review({ tools: [changed, send] }).reasons;
    expect(reason).toBe(
      'The tool srv.search changed since the workflow was saved: title: "Echo" → "Search all"; ' +
        'annotation readOnlyHint: true → false.',
    );
  });

  it('waits when a tool of the plan has no pin', () => {
    expect(review({ version: createVersion({ pins: [pin(search)] }) })).toEqual({
      hold: true,
      reasons: ['The tool srv.send was not pinned when the workflow was saved, so no one approved its definition.'],
    });
  });

  it('gives every reason that applies, one sentence each', () => {
    const changed = createTool('srv.search', { fingerprint: 'fp-1b', definition: createDefinition({ title: 'New' }) });
    const { hold, reasons } = review({
      review: 'every_fire',
      risk: 'high',
      version: createVersion({ pins: [pin(search)] }),
      tools: [changed, send],
    });
    expect(hold).toBe(true);
    expect(reasons).toHaveLength(5);
    expect(reasons.map((r) => r.slice(0, 30))).toEqual([
      'The workflow asks for approval',
      'The plan is high risk: a high-',
      'The plan is riskier than when ',
      'The tool srv.search changed si',
      'The tool srv.send was not pinn',
    ]);
  });

  it('ignores llm and condition steps, which call no tool', () => {
    const thinking = createPlan([
      { id: 'a', tool: 'srv.search', args: { text: 'x' } },
      { id: 'b', kind: 'llm', dependsOn: ['a'], args: { prompt: 'summarise' } },
      { id: 'c', kind: 'condition', dependsOn: ['a'], expression: 'steps.a.output.n > 1' },
    ]);
    expect(review({ plan: thinking, version: createVersion({ plan: thinking, pins: [pin(search)] }) })).toEqual({
      hold: false,
      reasons: [],
    });
  });
});

import { describe, expect, it } from 'vitest';
import { guardsDataFlow, isIdempotent, maxRisk, riskAbove, toolRisk } from '../../../src/engine/plan/risk.ts';
import type { RiskLevel, ToolInfo } from '../../../src/engine/types.ts';
import { createTool } from '../fixtures.ts';

type Annotations = ToolInfo['annotations'];
const withAnnotations = (annotations: Annotations, policy: Partial<ToolInfo['policy']> = {}) =>
  createTool('srv.t', { annotations, policy: { allowed: true, timeoutMs: 1000, ...policy } });

describe('risk of a tool from its annotations', () => {
  // Absent hints take the MCP spec defaults: readOnly false, destructive true, idempotent false, openWorld true.
  it.each<{ case: string; annotations: Annotations; risk: RiskLevel; retried: boolean; guarded: boolean }>([
    { case: 'no annotations at all', annotations: {}, risk: 'high', retried: false, guarded: true },
    { case: 'read-only', annotations: { readOnlyHint: true }, risk: 'low', retried: true, guarded: true },
    {
      case: 'read-only, closed world',
      annotations: { readOnlyHint: true, openWorldHint: false },
      risk: 'low',
      retried: true,
      guarded: false,
    },
    {
      case: 'read-only wins over destructive',
      annotations: { readOnlyHint: true, destructiveHint: true, openWorldHint: false },
      risk: 'low',
      retried: true,
      guarded: false,
    },
    {
      case: 'not read-only, nothing else said',
      annotations: { readOnlyHint: false },
      risk: 'high',
      retried: false,
      guarded: true,
    },
    { case: 'not destructive', annotations: { destructiveHint: false }, risk: 'medium', retried: false, guarded: true },
    {
      case: 'not destructive, closed world',
      annotations: { destructiveHint: false, openWorldHint: false },
      risk: 'medium',
      retried: false,
      guarded: false,
    },
    {
      case: 'not destructive, idempotent, closed world',
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
      risk: 'medium',
      retried: true,
      guarded: false,
    },
    {
      case: 'destructive, closed world',
      annotations: { destructiveHint: true, openWorldHint: false },
      risk: 'high',
      retried: false,
      guarded: true,
    },
    {
      case: 'idempotent, destructive by default',
      annotations: { idempotentHint: true },
      risk: 'high',
      retried: true,
      guarded: true,
    },
    {
      case: 'closed world, destructive by default',
      annotations: { openWorldHint: false },
      risk: 'high',
      retried: false,
      guarded: true,
    },
    {
      case: 'every hint false',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      risk: 'medium',
      retried: false,
      guarded: false,
    },
  ])(
    '$case: risk $risk, retried after a failure $retried, values from earlier steps confirmed $guarded',
    ({ annotations, risk, retried, guarded }) => {
      const tool = withAnnotations(annotations);
      expect(toolRisk(tool)).toBe(risk);
      expect(isIdempotent(tool)).toBe(retried);
      expect(guardsDataFlow(tool)).toBe(guarded);
    },
  );

  it.each<[Annotations, RiskLevel]>([
    [{}, 'low'],
    [{ readOnlyHint: true }, 'high'],
    [{ destructiveHint: false }, 'low'],
  ])('the configured risk wins over the annotations %j (%s)', (annotations, risk) => {
    expect(toolRisk(withAnnotations(annotations, { risk }))).toBe(risk);
  });

  it.each<[Annotations, boolean]>([
    [{ readOnlyHint: true }, false],
    [{ idempotentHint: true }, false],
    [{}, true],
  ])('the configured idempotence wins over the annotations %j (retried: %s)', (annotations, idempotent) => {
    expect(isIdempotent(withAnnotations(annotations, { idempotent }))).toBe(idempotent);
  });

  it.each<[boolean, Annotations]>([
    [true, { readOnlyHint: true, openWorldHint: false }],
    [false, {}],
    [false, { destructiveHint: true, openWorldHint: true }],
  ])('a tool configured sensitive=%s is guarded that way whatever its annotations %j', (sensitive, annotations) => {
    expect(guardsDataFlow(withAnnotations(annotations, { sensitive }))).toBe(sensitive);
  });
});

describe('comparing risks', () => {
  it.each<[RiskLevel[], RiskLevel]>([
    [[], 'low'],
    [['low'], 'low'],
    [['medium', 'low'], 'medium'],
    [['low', 'high', 'medium'], 'high'],
    [['high', 'low'], 'high'],
  ])('the risk of a plan with steps %j is %s', (levels, expected) => {
    expect(maxRisk(levels)).toBe(expected);
  });

  it('takes the risks from any iterable, such as a set', () => {
    expect(maxRisk(new Set<RiskLevel>(['low', 'medium']))).toBe('medium');
  });

  it.each<[RiskLevel, RiskLevel, boolean]>([
    ['low', 'low', false],
    ['low', 'medium', false],
    ['low', 'high', false],
    ['medium', 'low', true],
    ['medium', 'medium', false],
    ['medium', 'high', false],
    ['high', 'low', true],
    ['high', 'medium', true],
    ['high', 'high', false],
  ])('a %s step is riskier than an approved %s: %s', (a, b, expected) => {
    expect(riskAbove(a, b)).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import { compactPlanJsonSchema } from '../../src/engine/plan/compact-schema.ts';
import { planJsonSchema } from '../../src/engine/plan/plan-schema.ts';
import { isClosed, toAnthropicOutputFormat } from '../../src/llm/anthropic-schema.ts';
import { toSchemaName, unwrapJsonFence, withSchemaInstruction } from '../../src/llm/json-output.ts';
import { findErrorCode } from '../../src/llm/llm-failure.ts';

describe('anthropic structured output', () => {
  it('keeps the plan schema out of native mode: its args are free-form and its JSON values recursive', () => {
    expect(isClosed(planJsonSchema())).toBe(false);
    expect(toAnthropicOutputFormat(planJsonSchema())).toBeNull();
  });

  it('keeps the compact plan schema (the one the planner sends) out of native mode too: its args are free-form', () => {
    expect(isClosed(compactPlanJsonSchema())).toBe(false);
    expect(toAnthropicOutputFormat(compactPlanJsonSchema())).toBeNull();
  });

  it('accepts closed objects, enums, arrays and unions', () => {
    const schema = {
      type: 'object',
      properties: {
        action: { enum: ['approve', 'reject'] },
        tags: { type: 'array', items: { type: 'string' } },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        nested: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } } },
      },
      required: ['action'],
    };
    expect(isClosed(schema)).toBe(true);
    const format = toAnthropicOutputFormat(schema);
    expect(format?.type).toBe('json_schema');
    expect(format?.schema).toMatchObject({
      additionalProperties: false,
      properties: { nested: { additionalProperties: false } },
    });
  });

  it('refuses maps, untyped values and non-object roots', () => {
    expect(isClosed({ type: 'object', additionalProperties: { type: 'string' } })).toBe(false);
    expect(isClosed({ type: 'object' })).toBe(false);
    expect(isClosed({ type: 'object', properties: { any: {} } })).toBe(false);
    expect(toAnthropicOutputFormat({ type: 'array', items: { type: 'string' } })).toBeNull();
  });
});

describe('json output helpers', () => {
  it('unwraps one surrounding code fence and leaves other text alone', () => {
    expect(unwrapJsonFence('```json\n{"a":1}\n```')).toBe('{"a":1}');
    expect(unwrapJsonFence('  ```\n[1,2]\n```  \n')).toBe('[1,2]');
    expect(unwrapJsonFence('{"a":"```"}')).toBe('{"a":"```"}');
    expect(unwrapJsonFence('Here:\n```json\n{}\n```')).toBe('Here:\n```json\n{}\n```');
  });

  it('appends the schema after the system prompt, keeping the role marker first', () => {
    const text = withSchemaInstruction('[steward:planner]\nPlan.', { name: 'plan', schema: { type: 'object' } });
    expect(text.startsWith('[steward:planner]\nPlan.\n\n')).toBe(true);
    expect(text).toContain('{"type":"object"}');
  });

  it('makes schema names OpenAI accepts', () => {
    expect(toSchemaName('plan v2.1')).toBe('plan_v2_1');
    expect(toSchemaName('')).toBe('answer');
    expect(toSchemaName('x'.repeat(80))).toHaveLength(64);
  });
});

describe('findErrorCode', () => {
  it('finds the code a few causes deep, and inside an AggregateError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(findErrorCode(new TypeError('fetch failed', { cause: refused }))).toBe('ECONNREFUSED');
    const aggregate = new AggregateError([Object.assign(new Error('x'), { code: 'ENETUNREACH' })]);
    expect(findErrorCode(new Error('outer', { cause: aggregate }))).toBe('ENETUNREACH');
    expect(findErrorCode(new Error('plain'))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { outputShape, SHAPE_BUDGET } from '../../../src/engine/plan/output-shape.ts';

describe('outputShape', () => {
  it('writes an output schema as a short type: optional keys, arrays, maps, enums, $ref and unions', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'left out: the planner needs paths and types' },
        days: { type: 'array', items: { $ref: '#/$defs/day' } },
        tags: { type: 'object', additionalProperties: { type: 'string' } },
        unit: { enum: ['C', 'F'] },
        'odd key': { type: ['number', 'null'] },
        either: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'number' } }] },
      },
      required: ['city', 'days'],
      $defs: { day: { type: 'object', properties: { high: { type: 'number' } }, required: ['high'] } },
    };
    expect(outputShape(schema)).toBe(
      '{city: string, days: [{high: number}], tags?: {[key]: string}, unit?: "C"|"F", "odd key"?: number | null, either?: string | [number]}',
    );
  });

  it('stops at a recursive $ref and cuts a long shape to its budget', () => {
    const tree = {
      $defs: { node: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      $ref: '#/$defs/node',
    };
    expect(outputShape(tree)).toContain('…');
    const wide = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field${i}`, { type: 'string' }])),
    };
    expect(outputShape(wide)).toHaveLength(SHAPE_BUDGET + 1);
  });
});

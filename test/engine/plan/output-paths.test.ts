import { describe, expect, it } from 'vitest';
import { outputPathProblem } from '../../../src/engine/plan/output-paths.ts';

const weather = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'array', items: { $ref: '#/$defs/day' } },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    raw: {},
    either: { anyOf: [{ type: 'object', properties: { a: { type: 'number' } } }, { type: 'array' }] },
  },
  $defs: { day: { type: 'object', properties: { high: { type: 'number' } }, required: ['high'] } },
};

describe('outputPathProblem', () => {
  it('passes paths the schema allows: declared keys, array items through $ref, free maps, silent schemas, any branch', () => {
    for (const path of [
      [],
      ['city'],
      ['days', 0, 'high'],
      ['tags', 'anything'],
      ['raw', 'deep', 3, 'x'],
      ['either', 'a'],
      ['either', 2],
    ])
      expect(outputPathProblem(weather, path)).toBeNull();
  });

  it('refuses a key the schema does not declare, naming the ones it has', () => {
    expect(outputPathProblem(weather, ['town'])).toBe(
      'structuredContent.town cannot exist: the tool\'s output schema has no "town" there; it has "city", "days", "tags", "raw", "either"',
    );
    expect(outputPathProblem(weather, ['days', 0, 'low'])).toContain('structuredContent.days[0].low cannot exist');
  });

  it('refuses a key into a scalar or an array, and an index into an object', () => {
    expect(outputPathProblem(weather, ['city', 'name'])).toContain('has no object there (string)');
    expect(outputPathProblem(weather, ['days', 'first'])).toContain('structuredContent.days.first cannot exist');
    expect(outputPathProblem(weather, ['tags', 0])).toContain('has no array there');
  });

  it('lets additionalProperties true, or no properties at all, allow any key', () => {
    expect(outputPathProblem({ type: 'object', properties: { a: {} }, additionalProperties: true }, ['b'])).toBeNull();
    expect(outputPathProblem({ type: 'object' }, ['b', 'c'])).toBeNull();
  });
});

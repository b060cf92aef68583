import { describe, expect, it } from 'vitest';
import { allPairs, pairsOf, product } from './pairwise.ts';
import { ACTIONS, CHANNELS, CONTEXTS, DIMENSIONS, DRIVEN, notApplicable, planFor, SHAPES } from './matrix.ts';

const dims = { a: ['a1', 'a2', 'a3'], b: ['b1', 'b2', 'b3', 'b4'], c: ['c1', 'c2'] } as const;

describe('the all-pairs generator', () => {
  it('covers every pair of values from any two dimensions at least once, with fewer cells than the product', () => {
    const { cells, uncoverable } = allPairs(dims, { seed: 1, applicable: () => true });
    const covered = new Set(cells.flatMap((c) => pairsOf(dims, c)));
    for (const c of product(dims)) for (const p of pairsOf(dims, c)) expect(covered).toContain(p);
    expect(uncoverable).toEqual([]);
    expect(cells.length).toBeLessThan(product(dims).length);
    expect(cells.length).toBeGreaterThanOrEqual(12); // 3 × 4 pairs of a and b need at least 12 cells
  });

  it('is deterministic for a seed', () => {
    const one = allPairs(dims, { seed: 7, applicable: () => true });
    expect(allPairs(dims, { seed: 7, applicable: () => true })).toEqual(one);
  });

  it('chooses only applicable cells, and names the pairs that meet in no applicable cell', () => {
    const applicable = (c: { a: string; b: string }) => !(c.a === 'a1' && c.b === 'b1');
    const { cells, uncoverable } = allPairs(dims, { seed: 3, applicable });
    expect(cells.every(applicable)).toBe(true);
    expect(uncoverable).toEqual(['a=a1 & b=b1']);
    const covered = new Set(cells.flatMap((c) => pairsOf(dims, c)));
    for (const c of product(dims).filter(applicable)) for (const p of pairsOf(dims, c)) expect(covered).toContain(p);
  });
});

describe('the scenario matrix', () => {
  it('is the whole product, each cell run, not applicable or not driven yet on each channel', () => {
    const size = ACTIONS.length * SHAPES.length * CONTEXTS.length;
    expect(size).toBe(792);
    for (const channel of CHANNELS) {
      const full = planFor(channel, { full: true });
      expect(full).toHaveLength(size);
      const pairs = planFor(channel, { full: false });
      // Every applicable cell the channel drives meets each of its pairs in the covering set.
      const driven = DRIVEN[channel];
      const d = { action: ACTIONS, shape: driven.shapes, context: driven.contexts };
      const covered = new Set(pairs.filter((p) => p.fate === 'run').flatMap((p) => pairsOf(d, p.cell)));
      for (const p of full.filter((p) => p.fate === 'run'))
        for (const k of pairsOf(d, p.cell)) expect(covered).toContain(k);
    }
  });

  it('says why each not-applicable cell cannot apply', () => {
    const left = planFor('console', { full: true }).filter((p) => p.fate === 'notApplicable');
    expect(left.length).toBeGreaterThan(0);
    for (const p of left) expect(notApplicable(p.cell)).toMatch(/\w+.*: /);
    expect(DIMENSIONS.action).toBe(ACTIONS);
  });
});

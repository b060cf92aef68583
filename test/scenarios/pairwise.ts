/**
 * A deterministic all-pairs (pairwise) covering set: from the full product of a few dimensions, a greedy choice of
 * cells in which every pair of values from any two dimensions meets at least once. Only cells `applicable` allows are
 * chosen, so a pair that meets in no applicable cell cannot be covered: it is returned in `uncoverable`.
 */

/** One value per dimension, keyed by dimension name. */
export type Combination<D extends Record<string, readonly string[]>> = { [K in keyof D]: D[K][number] };

/** Two values of two different dimensions, as `dimA=valueA & dimB=valueB` (dimensions in declaration order). */
export type PairKey = string;

/** The chosen cells, in the order chosen, and the pairs no applicable cell has. */
export interface CoveringSet<D extends Record<string, readonly string[]>> {
  cells: Combination<D>[];
  uncoverable: PairKey[];
}

/** Every combination of the dimensions' values, in declaration order (the first dimension varies slowest). */
export function product<D extends Record<string, readonly string[]>>(dims: D): Combination<D>[] {
  let out: Record<string, string>[] = [{}];
  for (const [name, values] of Object.entries(dims))
    out = out.flatMap((partial) => values.map((v) => ({ ...partial, [name]: v })));
  return out as Combination<D>[];
}

/** The pairs a combination covers. */
export function pairsOf<D extends Record<string, readonly string[]>>(dims: D, c: Combination<D>): PairKey[] {
  const names = Object.keys(dims);
  const keys: PairKey[] = [];
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++) {
      const a = names[i]!;
      const b = names[j]!;
      keys.push(`${a}=${String(c[a])} & ${b}=${String(c[b])}`);
    }
  return keys;
}

/**
 * Greedy pairwise: repeatedly takes the applicable cell that covers the most pairs not yet covered; ties go to the
 * cell first in an order shuffled once by `seed`, so the same inputs always give the same set.
 */
export function allPairs<D extends Record<string, readonly string[]>>(
  dims: D,
  o: { seed: number; applicable: (c: Combination<D>) => boolean },
): CoveringSet<D> {
  const all = product(dims);
  const candidates = shuffled(
    all.filter((c) => o.applicable(c)),
    o.seed,
  ).map((c) => ({ c, pairs: pairsOf(dims, c) }));
  const wanted = new Set(candidates.flatMap((x) => x.pairs));
  const uncoverable = [...new Set(all.flatMap((c) => pairsOf(dims, c)))].filter((p) => !wanted.has(p));
  const cells: Combination<D>[] = [];
  while (wanted.size > 0) {
    let best = candidates[0]!;
    let bestScore = -1;
    for (const x of candidates) {
      const score = x.pairs.filter((p) => wanted.has(p)).length;
      if (score > bestScore) [best, bestScore] = [x, score];
    }
    cells.push(best.c);
    for (const p of best.pairs) wanted.delete(p);
  }
  return { cells, uncoverable };
}

/** A copy of `items` in an order fixed by `seed` (Fisher–Yates over mulberry32). */
function shuffled<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

import { describe, expect, it } from 'vitest';
import { GRAPH, layoutGraph, layoutTimeline, MIN_BAR_WIDTH, type GraphLayout } from '../../src/web/graph-layout.ts';
import { planChanges } from '../../src/web/plan-changes.ts';
import { createRevisionPlan } from '../store/builders.ts';

/** Points along an edge's SVG path (`M`, `C` and `L` with absolute coordinates), 50 per segment. */
function pathPoints(path: string): { x: number; y: number }[] {
  const tokens = path.match(/[MCL]|-?[\d.]+/g) ?? [];
  const points: { x: number; y: number }[] = [];
  let at = { x: 0, y: 0 };
  let i = 0;
  const num = () => Number(tokens[i++]);
  while (i < tokens.length) {
    const command = tokens[i++];
    if (command === 'M') at = { x: num(), y: num() };
    else if (command === 'L') {
      const to = { x: num(), y: num() };
      for (let k = 0; k <= 50; k++)
        points.push({ x: at.x + ((to.x - at.x) * k) / 50, y: at.y + ((to.y - at.y) * k) / 50 });
      at = to;
    } else if (command === 'C') {
      const [c1, c2, to] = [0, 1, 2].map(() => ({ x: num(), y: num() })) as [
        { x: number; y: number },
        { x: number; y: number },
        { x: number; y: number },
      ];
      for (let k = 0; k <= 50; k++) {
        const t = k / 50;
        const u = 1 - t;
        const b = (p0: number, p1: number, p2: number, p3: number) =>
          u * u * u * p0 + 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t * p3;
        points.push({ x: b(at.x, c1.x, c2.x, to.x), y: b(at.y, c1.y, c2.y, to.y) });
      }
      at = to;
    } else throw new Error(`unexpected path command ${command}`);
  }
  return points;
}

/** Each `from→to: node` where an edge's drawn path passes behind a node other than its own two ends. */
function edgesBehindNodes(g: GraphLayout): string[] {
  return g.edges.flatMap((e) =>
    g.nodes
      .filter((n) => n.id !== e.from && n.id !== e.to)
      .filter((n) =>
        pathPoints(e.path).some((p) => p.x > n.x && p.x < n.x + n.width && p.y > n.y && p.y < n.y + n.height),
      )
      .map((n) => `${e.from}→${e.to}: ${n.id}`),
  );
}

describe('layoutGraph', () => {
  it('routes an edge that skips layers around the nodes of the layers it crosses, never behind one', () => {
    // a fans out to b, c and d; d also waits for c (so it sits two layers right of a); e waits for a and d.
    const g = layoutGraph([
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: ['a'] },
      { id: 'c', dependsOn: ['a'] },
      { id: 'd', dependsOn: ['a', 'c'] },
      { id: 'e', dependsOn: ['a', 'd', 'b'] },
      { id: 'f', dependsOn: [] },
    ]);
    expect(edgesBehindNodes(g)).toEqual([]);
    // The edges that skip layers run in a lane: a space between rows, or the margin above or below them.
    const ad = g.edges.find((e) => e.from === 'a' && e.to === 'd')!;
    expect(ad.via).not.toBeNull();
    expect(g.nodes.filter((n) => n.layer === 1).every((n) => ad.via! < n.y || ad.via! > n.y + n.height)).toBe(true);
    // Every lane lies inside the picture, and edges between neighbouring layers need none.
    expect(g.edges.every((e) => e.via === null || (e.via > 0 && e.via < g.height))).toBe(true);
    expect(g.edges.find((e) => e.from === 'a' && e.to === 'b')!.via).toBeNull();
  });

  it('puts each step one layer right of its furthest dependency, in plan order within a layer', () => {
    const g = layoutGraph([
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: [] },
      { id: 'c', dependsOn: ['a'] },
      { id: 'd', dependsOn: ['a', 'c'] },
      { id: 'e', dependsOn: ['b'] },
    ]);
    expect(g.nodes.map((n) => [n.id, n.layer, n.row])).toEqual([
      ['a', 0, 0],
      ['b', 0, 1],
      ['c', 1, 0],
      ['d', 2, 0],
      ['e', 1, 1],
    ]);
    const d = g.nodes.find((n) => n.id === 'd')!;
    expect(d.x).toBe(GRAPH.margin + 2 * (GRAPH.nodeWidth + GRAPH.layerGap));
    expect(g.width).toBe(d.x + GRAPH.nodeWidth + GRAPH.margin);
    expect(g.height).toBe(2 * GRAPH.margin + 2 * GRAPH.nodeHeight + GRAPH.rowGap);
    // Edges run from the right side of a dependency to the left side of its dependant.
    const ad = g.edges.find((e) => e.from === 'a' && e.to === 'd')!;
    expect([ad.x1, ad.x2]).toEqual([GRAPH.margin + GRAPH.nodeWidth, d.x]);
    expect(g.edges).toHaveLength(4);
  });

  it('ignores unknown and self dependencies and survives a cycle', () => {
    const g = layoutGraph([
      { id: 'a', dependsOn: ['ghost', 'a', 'b'] },
      { id: 'b', dependsOn: ['a'] },
    ]);
    expect(g.nodes).toHaveLength(2);
    expect(g.nodes.every((n) => n.layer <= 2)).toBe(true);
    expect(g.edges.every((e) => e.from !== 'ghost' && e.from !== e.to)).toBe(true);
  });

  it('lays out an empty plan as an empty picture', () => {
    expect(layoutGraph([])).toEqual({ nodes: [], edges: [], width: 2 * GRAPH.margin, height: 2 * GRAPH.margin });
  });
});

describe('layoutTimeline', () => {
  it('places attempts on one scale from the first start to the last end, a row per step, retries on their step', () => {
    const t = layoutTimeline(
      [
        { stepId: 'b', attempt: 1, status: 'succeeded', start: 2_000, end: 6_000 },
        { stepId: 'a', attempt: 1, status: 'failed', start: 1_000, end: 2_000 },
        { stepId: 'a', attempt: 2, status: 'succeeded', start: 9_000, end: 11_000 },
      ],
      50_000,
      1000,
    );
    expect(t.rows).toEqual(['a', 'b']);
    expect(t.spanMs).toBe(10_000);
    expect(t.bars.map((b) => [b.stepId, b.attempt, b.row, b.x, b.width, b.durationMs])).toEqual([
      ['a', 1, 0, 0, 100, 1000],
      ['b', 1, 1, 100, 400, 4000],
      ['a', 2, 0, 800, 200, 2000],
    ]);
  });

  it('draws the wait before an attempt part by part, and starts the scale at the first wait', () => {
    const t = layoutTimeline(
      [
        { stepId: 'a', attempt: 1, status: 'failed', start: 1_000, end: 2_000 },
        {
          stepId: 'a',
          attempt: 2,
          status: 'succeeded',
          start: 4_000,
          end: 5_000,
          waits: [{ kind: 'backoff', from: 2_000, to: 4_000 }],
        },
        {
          stepId: 'b',
          attempt: 1,
          status: 'succeeded',
          start: 9_000,
          end: 11_000,
          waits: [
            { kind: 'queued', from: 5_000, to: 6_000 },
            { kind: 'held', from: 6_000, to: 9_000, note: 'until Ada resumed' },
          ],
        },
        {
          stepId: 'c',
          attempt: 1,
          status: 'succeeded',
          start: 2_000,
          end: 3_000,
          waits: [{ kind: 'held', from: 0, to: 2_000, note: 'until Ada continued' }],
        },
      ],
      20_000,
      1100,
    );
    expect(t.startMs).toBe(0);
    expect(t.spanMs).toBe(11_000);
    expect(t.bars.map((b) => [b.stepId, b.attempt, b.waits])).toEqual([
      ['a', 1, []],
      ['c', 1, [{ kind: 'held', x: 0, width: 200, ms: 2_000, note: 'until Ada continued' }]],
      ['a', 2, [{ kind: 'backoff', x: 200, width: 200, ms: 2_000 }]],
      [
        'b',
        1,
        [
          { kind: 'queued', x: 500, width: 100, ms: 1_000 },
          { kind: 'held', x: 600, width: 300, ms: 3_000, note: 'until Ada resumed' },
        ],
      ],
    ]);
    // An empty part (clocks of two processes) draws nothing.
    const skewed = layoutTimeline(
      [
        {
          stepId: 'a',
          attempt: 1,
          status: 'succeeded',
          start: 0,
          end: 10,
          waits: [{ kind: 'queued', from: 5, to: 5 }],
        },
      ],
      10,
      100,
    );
    expect(skewed.bars[0]!.waits).toEqual([]);
  });

  it('runs an open attempt up to now, and draws even an instant one', () => {
    const t = layoutTimeline(
      [
        { stepId: 'a', attempt: 1, status: 'succeeded', start: 0, end: 0 },
        { stepId: 'b', attempt: 1, status: 'running', start: 0, end: null },
      ],
      4_000,
      400,
    );
    expect(t.bars[0]!.width).toBe(MIN_BAR_WIDTH);
    expect(t.bars[1]).toMatchObject({ width: 400, durationMs: 4_000, open: true });
  });
});

describe('planChanges', () => {
  it('names the steps a revision added, removed and changed', () => {
    const first = createRevisionPlan();
    expect(planChanges(null, first)).toEqual(['first plan: 2 steps']);
    const [list, summary] = first.steps;
    const second = createRevisionPlan({
      steps: [
        { ...list!, description: 'List /var' },
        { kind: 'tool', id: 'count', tool: 'fs.count', args: {}, dependsOn: [], description: '', optional: false },
      ],
    });
    expect(summary).toBeDefined();
    expect(planChanges(first, second)).toEqual(['added count', 'removed summary', 'changed list']);
    expect(planChanges(second, second)).toEqual(['no step changed']);
  });
});

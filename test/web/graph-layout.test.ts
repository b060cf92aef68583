import { describe, expect, it } from 'vitest';
import { GRAPH, layoutGraph, layoutTimeline, MIN_BAR_WIDTH } from '../../src/web/graph-layout.ts';
import { planChanges } from '../../src/web/plan-changes.ts';
import { createRevisionPlan } from '../store/builders.ts';

describe('layoutGraph', () => {
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

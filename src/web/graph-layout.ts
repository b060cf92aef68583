/**
 * Where things go on the run page, as pure functions of the plan and the attempts: the plan graph in layers left to
 * right (a step one layer right of its furthest dependency), and the timeline's bars on a shared time scale.
 */
import type { WaitKind, WaitSegment } from './timeline-waits.ts';

/** A step as the graph needs it: its id and the steps it waits for. */
export interface GraphStep {
  id: string;
  dependsOn: readonly string[];
}

/** A placed step: its layer (column), its row in the layer, and its box. */
export interface GraphNode {
  id: string;
  layer: number;
  row: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * An edge from a dependency's right side to its dependant's left side, as an SVG path: a curve across the gap between
 * two layers; an edge that skips layers runs along `via`, a line clear of the nodes of the layers it crosses (the
 * space between two rows, above the first or below the last), curving into it and out of it in the gaps.
 */
export interface GraphEdge {
  from: string;
  to: string;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** The height of the lane it crosses the layers between on (null: it joins neighbouring layers). */
  via: number | null;
  path: string;
}

/** The whole graph and the size of the picture that holds it. */
export interface GraphLayout {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

/** Box sizes and gaps, in SVG units. */
export const GRAPH = { nodeWidth: 150, nodeHeight: 44, layerGap: 60, rowGap: 16, margin: 12 } as const;

/**
 * Lays the steps out in layers. Dependencies on unknown steps are ignored, and a cycle (a stored plan should have
 * none) cannot loop: a step's layer is bounded by the number of steps. Steps keep their plan order within a layer.
 */
export function layoutGraph(steps: readonly GraphStep[]): GraphLayout {
  const known = new Map(steps.map((s) => [s.id, s]));
  const layers = new Map<string, number>();
  const visiting = new Set<string>();
  const layerOf = (id: string): number => {
    const done = layers.get(id);
    if (done !== undefined) return done;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const deps = (known.get(id)?.dependsOn ?? []).filter((d) => known.has(d) && d !== id);
    const layer = Math.min(
      steps.length,
      deps.reduce((max, d) => Math.max(max, layerOf(d) + 1), 0),
    );
    visiting.delete(id);
    layers.set(id, layer);
    return layer;
  };
  const rows = new Map<number, number>();
  const nodes: GraphNode[] = steps.map((s) => {
    const layer = layerOf(s.id);
    const row = rows.get(layer) ?? 0;
    rows.set(layer, row + 1);
    return {
      id: s.id,
      layer,
      row,
      x: GRAPH.margin + layer * (GRAPH.nodeWidth + GRAPH.layerGap),
      y: GRAPH.margin + row * (GRAPH.nodeHeight + GRAPH.rowGap),
      width: GRAPH.nodeWidth,
      height: GRAPH.nodeHeight,
    };
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const rowCount = Math.max(0, ...rows.values());
  const height = 2 * GRAPH.margin + Math.max(0, rowCount * GRAPH.nodeHeight + (rowCount - 1) * GRAPH.rowGap);
  const edges: GraphEdge[] = steps.flatMap((s) => {
    const to = byId.get(s.id);
    return [...new Set(s.dependsOn)].flatMap((d) => {
      const from = byId.get(d);
      if (!from || !to || d === s.id) return [];
      const ends = { x1: from.x + from.width, y1: from.y + from.height / 2, x2: to.x, y2: to.y + to.height / 2 };
      const between = nodes.filter((n) => n.layer > from.layer && n.layer < to.layer);
      const via = between.length ? laneThrough(between, (ends.y1 + ends.y2) / 2, rowCount, height) : null;
      return [{ from: d, to: s.id, ...ends, via, path: edgePath(ends, via) }];
    });
  });
  const layerCount = nodes.reduce((max, n) => Math.max(max, n.layer + 1), 0);
  return {
    nodes,
    edges,
    width: 2 * GRAPH.margin + Math.max(0, layerCount * GRAPH.nodeWidth + (layerCount - 1) * GRAPH.layerGap),
    height,
  };
}

/**
 * A lane clear of `nodes` (the nodes of the layers an edge crosses), nearest `want`: the middle of a space between two
 * rows, or of the margin above the first row or below the last.
 */
function laneThrough(nodes: readonly GraphNode[], want: number, rowCount: number, height: number): number {
  const pitch = GRAPH.nodeHeight + GRAPH.rowGap;
  const lanes = [GRAPH.margin / 2, height - GRAPH.margin / 2];
  for (let r = 1; r < rowCount; r++) lanes.push(GRAPH.margin + r * pitch - GRAPH.rowGap / 2);
  const clear = lanes.filter((y) => nodes.every((n) => y < n.y || y > n.y + n.height));
  return clear.reduce((best, y) => (Math.abs(y - want) < Math.abs(best - want) ? y : best), clear[0] ?? want);
}

/** The edge's path: one curve across a gap, or a curve into the lane `via`, along it, and a curve out of it. */
function edgePath(e: { x1: number; y1: number; x2: number; y2: number }, via: number | null): string {
  const curve = (x1: number, y1: number, x2: number, y2: number) => {
    const mid = (x1 + x2) / 2;
    return `C${mid},${y1} ${mid},${y2} ${x2},${y2}`;
  };
  if (via === null) return `M${e.x1},${e.y1} ${curve(e.x1, e.y1, e.x2, e.y2)}`;
  const into = e.x1 + GRAPH.layerGap;
  const out = e.x2 - GRAPH.layerGap;
  return `M${e.x1},${e.y1} ${curve(e.x1, e.y1, into, via)} L${out},${via} ${curve(out, via, e.x2, e.y2)}`;
}

/** One try at a step, in milliseconds since the epoch; `end` null while it runs. */
export interface TimedAttempt {
  stepId: string;
  attempt: number;
  status: string;
  start: number;
  end: number | null;
  /** The wait before it, in order, each part ending by its start (see `timeline-waits.ts`). */
  waits?: readonly WaitSegment[];
  /** Steward was down: the attempt is known up to `from`, and the run was taken over at `to` (`timeline-gaps.ts`). */
  gap?: { from: number; to: number } | null;
}

/** A part of the wait before a bar: its kind, left edge, width and length, and who released a hold. */
export interface TimelineWait {
  kind: WaitKind;
  x: number;
  width: number;
  ms: number;
  note?: string;
}

/** A bar of the timeline: its row (one per step, in order of first start), its left edge and width. */
export interface TimelineBar {
  stepId: string;
  attempt: number;
  status: string;
  row: number;
  x: number;
  width: number;
  durationMs: number;
  /** Still running: the bar ends at `now`. */
  open: boolean;
  /** The wait before it, queued, held or backing off, part by part. */
  waits: TimelineWait[];
  /** After it, the time Steward was down until it took the run over (a restart). */
  gap?: { x: number; width: number; ms: number };
}

/** The timeline: bars, the steps by row, and the time span the scale covers. */
export interface TimelineLayout {
  bars: TimelineBar[];
  rows: string[];
  startMs: number;
  spanMs: number;
  width: number;
}

/** The narrowest bar drawn, so an attempt of a millisecond still shows. */
export const MIN_BAR_WIDTH = 2;

/** Places the attempts on a scale `width` wide from the first start to the last end (or `now` while one runs). */
export function layoutTimeline(attempts: readonly TimedAttempt[], now: number, width: number): TimelineLayout {
  const sorted = [...attempts].sort((a, b) => a.start - b.start || a.attempt - b.attempt);
  const rows: string[] = [];
  for (const a of sorted) if (!rows.includes(a.stepId)) rows.push(a.stepId);
  const startMs = sorted.reduce((min, a) => Math.min(min, a.waits?.[0]?.from ?? a.start), sorted[0]?.start ?? now);
  const endMs = sorted.reduce((max, a) => Math.max(max, a.end ?? Math.max(now, a.start)), startMs);
  const spanMs = Math.max(1, endMs - startMs);
  const scale = width / spanMs;
  const bars = sorted.map((a) => {
    const end = a.gap ? a.gap.from : (a.end ?? Math.max(now, a.start));
    const x = (a.start - startMs) * scale;
    const gap = a.gap && {
      x: (a.gap.from - startMs) * scale,
      width: (a.gap.to - a.gap.from) * scale,
      ms: a.gap.to - a.gap.from,
    };
    return {
      stepId: a.stepId,
      attempt: a.attempt,
      status: a.status,
      row: rows.indexOf(a.stepId),
      x,
      width: Math.min(width - x, Math.max(MIN_BAR_WIDTH, (end - a.start) * scale)),
      durationMs: Math.max(0, end - a.start),
      open: a.end === null,
      ...(gap && { gap }),
      waits: (a.waits ?? [])
        .filter((w) => w.to > w.from)
        .map((w) => ({
          kind: w.kind,
          x: (w.from - startMs) * scale,
          width: (w.to - w.from) * scale,
          ms: w.to - w.from,
          ...(w.note !== undefined && { note: w.note }),
        })),
    };
  });
  return { bars, rows, startMs, spanMs, width };
}

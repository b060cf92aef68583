/**
 * CPU profiles of bench work through the inspector (what `node --cpu-prof` records), summarized as the top costs
 * with file:line. TypeScript locations are mapped back through the source maps tsx registers.
 */
import { Session } from 'node:inspector/promises';
import { findSourceMap } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { header, row } from './stats.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
/** A V8 CPU profile (the `.cpuprofile` format). */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One aggregated cost. */
export interface ProfileEntry {
  fn: string;
  where: string;
  ms: number;
  share: number;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IDLE = new Set(['(idle)', '(root)']);

/** Node ids whose samples count as busy: not idle, and not the profiler's own work (collecting the profile at stop). */
function busyNodes(profile: CpuProfile): Set<number> {
  const busy = new Set<number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const visit = (node: ProfileNode, inProfiler: boolean) => {
    const own = inProfiler || node.callFrame.url === 'node:inspector';
    if (!own && !IDLE.has(node.callFrame.functionName)) busy.add(node.id);
    for (const c of node.children ?? []) {
      const child = byId.get(c);
      if (child) visit(child, own);
    }
  };
  const root = profile.nodes[0];
  if (root) visit(root, false);
  return busy;
}

/** Runs `work` under the CPU profiler (sampling every `intervalUs`). */
export async function profileCpu<T>(
  work: () => Promise<T>,
  intervalUs = 250,
): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    const result = await work();
    const { profile } = await session.post('Profiler.stop');
    return { result, profile: profile as unknown as CpuProfile };
  } finally {
    session.disconnect();
  }
}

/** Where a frame is, as `path:line` relative to the repository, TypeScript lines where a source map knows them. */
function locate(frame: CallFrame): string {
  if (!frame.url) return '(native)';
  if (!frame.url.startsWith('file:')) return `${frame.url}:${frame.lineNumber + 1}`;
  const entry = findSourceMap(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
  const original = entry && 'originalSource' in entry ? entry : undefined;
  const file = original ? original.originalSource : frame.url;
  const line = original ? original.originalLine + 1 : frame.lineNumber + 1;
  const path = file.startsWith('file:') ? relative(ROOT, fileURLToPath(file)) : file;
  return `${path}:${line}`;
}

function keyOf(frame: CallFrame): { fn: string; where: string } {
  return { fn: frame.functionName || '(anonymous)', where: locate(frame) };
}

/** Self time per function, highest first, as a share of the busy (non-idle) samples. */
export function topSelf(profile: CpuProfile, n: number): ProfileEntry[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const counted = busyNodes(profile);
  const totals = new Map<string, { fn: string; where: string; us: number }>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    const dt = profile.timeDeltas[i] ?? 0;
    if (!frame || !counted.has(id)) return;
    busy += dt;
    const k = keyOf(frame);
    const id2 = `${k.fn} ${k.where}`;
    const t = totals.get(id2) ?? { ...k, us: 0 };
    t.us += dt;
    totals.set(id2, t);
  });
  return [...totals.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, n)
    .map((t) => ({ fn: t.fn, where: t.where, ms: t.us / 1000, share: t.us / Math.max(1, busy) }));
}

/** Inclusive time of the project's own functions (src/ and bench/), each counted once per sample. */
export function topInclusive(profile: CpuProfile, n: number, prefix = '/src/'): ProfileEntry[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const keys = new Map<number, string | null>();
  const names = new Map<string, { fn: string; where: string }>();
  const keyFor = (id: number): string | null => {
    if (keys.has(id)) return keys.get(id) ?? null;
    const frame = byId.get(id)?.callFrame;
    let key: string | null = null;
    if (frame && frame.url.includes(prefix) && !frame.url.includes('node_modules')) {
      const k = keyOf(frame);
      key = `${k.fn} ${k.where}`;
      names.set(key, k);
    }
    keys.set(id, key);
    return key;
  };
  const counted = busyNodes(profile);
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    if (!counted.has(id)) return;
    busy += dt;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = keyFor(cur);
      if (k && !seen.has(k)) {
        seen.add(k);
        totals.set(k, (totals.get(k) ?? 0) + dt);
      }
    }
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => ({
      ...(names.get(k) as { fn: string; where: string }),
      ms: us / 1000,
      share: us / Math.max(1, busy),
    }));
}

/** Busy (non-idle) CPU time of a profile, in ms. */
export function busyMs(profile: CpuProfile): number {
  const counted = busyNodes(profile);
  let us = 0;
  profile.samples.forEach((id, i) => {
    if (counted.has(id)) us += profile.timeDeltas[i] ?? 0;
  });
  return us / 1000;
}

/** A Markdown table of profile entries. */
export function profileTable(entries: readonly ProfileEntry[], per: number, unit: string): string[] {
  return [
    ...header(['function', 'where', `ms ${unit}`, 'share of busy CPU'], 2),
    ...entries.map((e) =>
      row([`\`${e.fn}\``, `\`${e.where}\``, (e.ms / per).toFixed(3), `${(e.share * 100).toFixed(1)}%`]),
    ),
  ];
}

/**
 * The comparison against LangGraph as Markdown: per shape, Steward ÷ LangGraph for wall time, model calls and tokens
 * (both counted by the fake from the whole request), each side's own time, and issue 13's targets.
 */
import type { PeerSection } from './against-peer.ts';
import { PEER_LATENCY } from './latency-model.ts';
import { paired } from './report-react.ts';
import type { RunRow } from './run-analysis.ts';
import { header, int, median, row, spread } from './stats.ts';
import { SHAPES } from './tasks.ts';
import type { TargetRow } from './targets.ts';

const PE = 'plan-execute';
const LG = 'langgraph';
const tokens = (r: RunRow) => r.inputTokens + r.outputTokens;
/** A side's own time: wall less the modelled model time and the modelled tool time on its path. */
export const ownMs = (r: RunRow) => r.wallMs - r.analyticMs;

function ratio(rows: readonly RunRow[], f: (r: RunRow) => number): number[] {
  return paired(rows, PE, LG, (x, y) => f(x) / f(y));
}

function pair(rows: readonly RunRow[], f: (r: RunRow) => number, digits = 0): string {
  const side = (mode: string) => median(rows.filter((r) => r.mode === mode).map(f));
  const fmt = (x: number) => (digits === 0 ? int(x) : x.toFixed(digits));
  return `${fmt(side(PE))} / ${fmt(side(LG))}`;
}

/** The per-shape table. */
export function peerTable(rows: readonly RunRow[]): string[] {
  const out = header(
    [
      'shape',
      'tasks',
      'wall ms S / LG',
      'wall S ÷ LG',
      'modelled S ÷ LG',
      'model calls S / LG',
      'tokens S / LG',
      'tokens S ÷ LG',
      'output tokens S / LG',
      'own ms S / LG',
      'correct S / LG',
    ],
    1,
  );
  const shapes = SHAPES.filter((s) => rows.some((r) => r.shape === s));
  for (const shape of [...shapes, 'all']) {
    const of = shape === 'all' ? rows : rows.filter((r) => r.shape === shape);
    const correct = (mode: string) => {
      const rs = of.filter((r) => r.mode === mode);
      return `${rs.filter((r) => r.correct).length}/${rs.length}`;
    };
    out.push(
      row([
        shape === 'all' ? '**all**' : shape,
        new Set(of.map((r) => r.task)).size,
        pair(of, (r) => r.wallMs),
        spread(ratio(of, (r) => r.wallMs)),
        spread(ratio(of, (r) => r.analyticMs)),
        pair(of, (r) => r.llmCalls),
        pair(of, tokens),
        spread(ratio(of, tokens)),
        pair(of, (r) => r.outputTokens),
        pair(of, ownMs, 1),
        `${correct(PE)} / ${correct(LG)}`,
      ]),
    );
  }
  return out;
}

/** The section: settings, the table, and where the peer wins. */
export function peerSection(s: PeerSection, scale: number): string[] {
  const title = '## 1b. Against LangGraph (the agent users pick)';
  if (s.skipped) return [title, '', s.skipped];
  const l = PEER_LATENCY;
  const slower = (f: (r: RunRow) => number) =>
    SHAPES.filter(
      (shape) =>
        median(
          ratio(
            s.rows.filter((r) => r.shape === shape),
            f,
          ),
        ) > 1,
    );
  const list = (shapes: readonly string[]) => (shapes.length > 0 ? shapes.join(', ') : 'none');
  return [
    title,
    '',
    `Steward (its defaults: maxParallel ${s.maxParallel}, auto-approved low-risk plans, PostgreSQL logging) against LangGraph's \`createAgent\` (${s.versions}; \`ChatOpenAI\`, MCP tools through \`@langchain/mcp-adapters\`), both given the same ${s.toolCount} tools of the same MCP servers, the same fake model process answering the peer with native \`tool_calls\` (every ready independent call in one message), interleaved per task and round. Issue 13's latency model for both: scale ${scale} × (${l.ttftMs} ms + 0.05 ms per input token + ${1000 / l.outputTokensPerSec} ms per output token), no jitter; every tool call takes at least ${s.toolFloorMs} ms (500 ms × scale; longer sleeps keep their length). Tokens: the fake counts every request whole (messages, earlier tool calls, the response schema, the tool definitions), 4 characters a token. "modelled" = the model latencies the fake applied to that run plus the modelled tool time on the side's path (Steward: its plan's DAG at maxParallel ${s.maxParallel}; LangGraph: each turn's longest call), what the wall time would be with no time spent anywhere else, so it does not move with the machine's load; "own ms" = wall − modelled (Steward: its dispatcher, store and HTTP; LangGraph: its graph, adapters and HTTP). Ratios are Steward ÷ LangGraph per task and round, median (p25–p75): below 1 Steward is faster or leaner.`,
    '',
    ...peerTable(s.rows),
    '',
    `Where LangGraph wins: measured, on ${list(slower((r) => r.wallMs))}; by the modelled times (the design's cost, load aside), on ${list(slower((r) => r.analyticMs))}. Tokens: on ${list(slower(tokens))}.`,
  ];
}

const WALL_TARGETS: [string, string[], number][] = [
  ['chain of 4', ['chain-4'], 0.75],
  ['fan-out of 8', ['fan-8'], 1.0],
  ['single call', ['single'], 1.0],
  ['diamond and mixed', ['diamond', 'mixed'], 0.9],
];

/** Issue 13's targets against LangGraph. */
export function peerTargetRows(s: PeerSection): TargetRow[] {
  const mark = (ok: boolean) => (ok ? '✔' : '✘ missed');
  if (s.skipped) return [{ target: 'Against LangGraph', goal: 'issue 13', measured: 'not run (see 1b)', met: '—' }];
  const of = (shapes: string[]) => s.rows.filter((r) => shapes.includes(r.shape));
  const wall = WALL_TARGETS.map(([name, shapes, goal]): TargetRow => {
    const per = shapes.map((shape) => {
      const rows = of([shape]);
      return [shape, median(ratio(rows, (r) => r.wallMs)), median(ratio(rows, (r) => r.analyticMs))] as const;
    });
    return {
      target: `Wall time against LangGraph, ${name}: Steward ÷ LangGraph`,
      goal: `≤ ${goal.toFixed(2)}×`,
      measured: per.map(([shape, x, m]) => `${shape} ${x.toFixed(2)}× (modelled ${m.toFixed(2)}×)`).join(', '),
      met: mark(per.every(([, x]) => x <= goal)),
    };
  });
  const shapes = SHAPES.filter((shape) => s.rows.some((r) => r.shape === shape));
  const tok = shapes.map((shape) => [shape, median(ratio(of([shape]), tokens))] as const);
  const over = tok.filter(([, x]) => !(x <= 0.8));
  const own = s.rows.filter((r) => r.mode === PE).map(ownMs);
  return [
    ...wall,
    {
      target: `Tokens against LangGraph (${s.toolCount} tools connected), every shape: Steward ÷ LangGraph`,
      goal: '≤ 0.8×',
      measured: over.length
        ? `above on ${over.length}/${tok.length}: ${over.map(([shape, x]) => `${shape} ${x.toFixed(2)}×`).join(', ')}`
        : `all ${tok.length}; highest ${Math.max(...tok.map(([, x]) => x)).toFixed(2)}×`,
      met: mark(over.length === 0),
    },
    {
      target: "Steward's own time per run (wall − modelled model time − tool time), PostgreSQL, runs against LangGraph",
      goal: '≤ 20 ms',
      measured: `${spread(own, 1)} ms (LangGraph's own: ${spread(s.rows.filter((r) => r.mode === LG).map(ownMs), 1)} ms)`,
      met: mark(median(own) <= 20),
    },
  ];
}

/**
 * Section 9: quick answers against the plan path on single-lookup questions, side by side in one run. The same
 * Steward wiring twice on PostgreSQL, the same MCP servers and the same fake model (its latency model included):
 * one with quick answers on (the butler loop), one with them off (planner, plan, dispatcher, report). Both see the
 * tools as an operator who declared them read-only and closed-world in mcp.json would make them (the reference servers
 * do not annotate them), so the plan path starts its plan without review as well. Time is from the message to the
 * answer (or report) the person gets; tokens are every model call of the run, as `llm_usage` recorded them.
 */
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier, ToolRunner } from '../src/engine/ports.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { taskTag } from './fake-model.ts';
import { benchSettings } from './profile.ts';
import { header, int, median, quantile, row } from './stats.ts';
import type { BenchTask } from './tasks.ts';
import type { World } from './world.ts';

const PATHS = ['quick', 'plan'] as const;
type Path = (typeof PATHS)[number];

/** One measured run. */
export interface QuickRow {
  section: 'quick-answers';
  path: Path;
  task: string;
  round: number;
  wallMs: number;
  correct: boolean;
  inputTokens: number;
  outputTokens: number;
  modelCalls: number;
  route: string | null;
}

/** The operator's word in mcp.json (`"readOnly": true, "openWorld": false`) on every tool of the bench's servers. */
export function declaredReadOnly(tools: ToolRunner): ToolRunner {
  return {
    listTools: () =>
      tools
        .listTools()
        .map((t) => ({ ...t, annotations: { ...t.annotations, readOnlyHint: true, openWorldHint: false } })),
    callTool: (name, args, options) => tools.callTool(name, args, options),
  };
}

/** Runs every single-lookup task `rounds` times on each path, interleaved, and renders the section. */
export async function benchQuickAnswers(
  world: World,
  options: { rounds: number; onRow: (r: QuickRow) => void; log: (line: string) => void },
): Promise<{ rows: QuickRow[]; markdown: string[] }> {
  const waiters = new Map<string, (m: OutboundMessage) => void>();
  const notifier: Notifier = { send: async (c, m) => waiters.get(c.key)?.(m) };
  const store = new PgRunStore(world.db.db);
  const base = benchSettings(16);
  const deps = {
    llm: world.llm,
    tools: declaredReadOnly(world.host),
    store,
    notifier,
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
    log: () => undefined,
  };
  const stewards: Record<Path, Steward> = {
    quick: new Steward({ ...deps, settings: { ...base, quickAnswers: { maxTurns: 4, maxTokens: 12_000 } } }),
    plan: new Steward({ ...deps, settings: base }),
  };
  const tasks = world.tasks.filter((t) => t.shape === 'single');
  const rows: QuickRow[] = [];
  try {
    for (let round = 1; round <= options.rounds; round++) {
      for (const task of tasks) {
        // Alternating which goes first, so neither path always meets a warm server.
        const order = round % 2 === 0 ? [...PATHS].reverse() : PATHS;
        for (const path of order) {
          const r = await runOnce(stewards[path], path, task, round, waiters, world);
          rows.push(r);
          options.onRow(r);
        }
      }
      options.log(`quick answers: round ${round} of ${options.rounds}`);
    }
  } finally {
    await Promise.all(Object.values(stewards).map((s) => s.shutdown()));
  }
  return { rows, markdown: render(rows, tasks.length, options.rounds) };
}

async function runOnce(
  steward: Steward,
  path: Path,
  task: BenchTask,
  round: number,
  waiters: Map<string, (m: OutboundMessage) => void>,
  world: World,
): Promise<QuickRow> {
  const key = `quick-${path}-${task.id}-${round}-${crypto.randomUUID()}`;
  const end = await askAndWait(steward, key, `${taskTag(task.id, round)} ${task.request}`, waiters);
  const run = await world.db.db
    .selectFrom('runs')
    .select(['id', 'route'])
    .where('conversation_key', '=', key)
    .executeTakeFirstOrThrow();
  const usage = await world.db.db
    .selectFrom('llm_usage')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('input_tokens'), eb.lit(0)).as('input'),
      eb.fn.coalesce(eb.fn.sum<number>('output_tokens'), eb.lit(0)).as('output'),
      eb.fn.countAll<number>().as('calls'),
    ])
    .where('run_id', '=', run.id)
    .executeTakeFirstOrThrow();
  return {
    section: 'quick-answers',
    path,
    task: task.id,
    round,
    wallMs: end.wallMs,
    correct: end.text?.includes(task.expected) ?? false,
    inputTokens: Number(usage.input),
    outputTokens: Number(usage.output),
    modelCalls: Number(usage.calls),
    route: run.route,
  };
}

function render(rows: readonly QuickRow[], tasks: number, rounds: number): string[] {
  const lines = [
    '#### 9. Quick answers against the plan path (single lookups)',
    '',
    `${tasks} single-lookup tasks × ${rounds} rounds on each path, interleaved, in one run: the same Steward wiring,`,
    'PostgreSQL, MCP servers and fake model. Quick: the butler loop answers (tools declared read-only and closed-world).',
    'Plan: quick answers off, so planner, plan started without review, step, report. Time is from the message to the',
    'text the person gets; tokens are every model call of the run.',
    '',
    ...header([
      'Path',
      'Runs',
      'Correct',
      'Route',
      'Median ms',
      'p90 ms',
      'Median tokens in',
      'Median tokens out',
      'Model calls',
    ]),
  ];
  for (const path of PATHS) {
    const mine = rows.filter((r) => r.path === path);
    if (mine.length === 0) continue;
    const routes = [...new Set(mine.map((r) => r.route ?? 'none'))].join(', ');
    lines.push(
      row([
        path,
        mine.length,
        `${mine.filter((r) => r.correct).length}/${mine.length}`,
        routes,
        int(median(mine.map((r) => r.wallMs))),
        int(
          quantile(
            mine.map((r) => r.wallMs),
            0.9,
          ),
        ),
        int(median(mine.map((r) => r.inputTokens))),
        int(median(mine.map((r) => r.outputTokens))),
        int(median(mine.map((r) => r.modelCalls))),
      ]),
    );
  }
  const q = rows.filter((r) => r.path === 'quick');
  const p = rows.filter((r) => r.path === 'plan');
  if (q.length > 0 && p.length > 0) {
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
    const tq = median(q.map((r) => r.inputTokens + r.outputTokens));
    const tp = median(p.map((r) => r.inputTokens + r.outputTokens));
    lines.push(
      '',
      `Quick over plan: time ${ratio(median(q.map((r) => r.wallMs)), median(p.map((r) => r.wallMs)))}×, ` +
        `tokens ${ratio(tq, tp)}× (medians).`,
    );
  }
  return lines;
}

/**
 * Sends `text` as a new request in conversation `key` and waits for what the person gets: the report or answer
 * (its text), or an error notice (null). The time from the message to it, once the Steward is idle again.
 */
export async function askAndWait(
  steward: Steward,
  key: string,
  text: string,
  waiters: Map<string, (m: OutboundMessage) => void>,
): Promise<{ text: string | null; wallMs: number }> {
  const ended = new Promise<{ text: string | null; at: number }>((resolve) => {
    waiters.set(key, (m) => {
      const at = performance.now();
      if (m.kind === 'report' || m.kind === 'answer') resolve({ text: m.text, at });
      else if (m.kind === 'notice' && m.level === 'error') resolve({ text: null, at });
    });
  });
  const t0 = performance.now();
  await steward.message({ conversation: { channel: 'bench', key }, actor: { id: 'bench', channel: 'bench' }, text });
  const end = await ended;
  await steward.idle();
  waiters.delete(key);
  return { text: end.text, wallMs: end.at - t0 };
}

/**
 * Section 12 (`BENCH_ONLY=cache`): how much of the planner's and the front desk's prompts a provider's prompt cache
 * serves (issue 31), over the whole task mix, with Steward's default settings (quick answers on, the planner asked
 * beside the front desk) on tools declared read-only and closed-world as in section 11, so that every request meets
 * both. The fake model simulates OpenAI's cache on the prompts it receives and charges the tokens read from it no
 * prefill (bench/prompt-cache-model.ts); on the same prompts it computes what Anthropic's rule would read, with the
 * system prompt as one marked block (before) and cut into marked blocks (after, src/llm/anthropic-cache.ts), for a
 * model whose minimum is 1,024 tokens (Sonnet 4.5/4.6) and one whose minimum is 4,096 (Haiku 4.5, Opus 4.5/4.6).
 * Rounds run the same tasks again: round 1 is each prompt's first sight (what a stream of different requests gets),
 * later rounds its repeats (the same request again within minutes, at best).
 */
import { loadConfig } from '../src/config.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier } from '../src/engine/ports.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { defaultMaxParallel } from './against-peer.ts';
import type { LlmCallRecord } from './fake-llm-handle.ts';
import { taskTag } from './fake-model.ts';
import { DEFAULT_LATENCY, nominalLatencyMs } from './latency-model.ts';
import { benchSettings } from './profile.ts';
import { askAndWait, declaredReadOnly } from './quick-answers.ts';
import { header, int, pct, row, sum } from './stats.ts';
import { SHAPES, type BenchTask } from './tasks.ts';
import type { World } from './world.ts';

/** The roles measured: the planner, and the front desk (each of its turns). */
const ROLES = ['planner', 'butler'] as const;
/** Anthropic's readings, as the fake keys them: layout and minimum. */
type AnthropicKey = `${'single' | 'split'}-${1024 | 4096}`;

/** One model call of a measured run. */
export interface PromptCacheRow {
  section: 'prompt-cache';
  task: string;
  shape: string;
  round: number;
  role: string;
  inputTokens: number;
  outputTokens: number;
  /** Read from the simulated OpenAI cache. */
  cachedTokens: number;
  /** What Anthropic's rule would read, by layout and minimum. */
  anthropic: Record<string, number>;
  /** What Anthropic's rule would write to its cache, by layout and minimum. */
  anthropicWritten: Record<string, number>;
  /** The run's: from the message to the text the person gets (with the OpenAI cache on), and whether it was right. */
  wallMs: number;
  correct: boolean;
}

/** Runs every task `rounds` times, in order, through one Steward with the defaults. */
export async function benchPromptCache(
  world: World,
  options: { rounds: number; scale: number; onRow: (r: PromptCacheRow) => void; log: (line: string) => void },
): Promise<{ rows: PromptCacheRow[]; markdown: string[] }> {
  const waiters = new Map<string, (m: OutboundMessage) => void>();
  const notifier: Notifier = { send: async (c, m) => waiters.get(c.key)?.(m) };
  const defaults = loadConfig({ OPENAI_API_KEY: 'bench', STEWARD_MODEL: 'bench-model' }).settings;
  const steward = new Steward({
    llm: world.llm,
    tools: declaredReadOnly(world.host),
    store: new PgRunStore(world.db.db),
    notifier,
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
    log: () => undefined,
    settings: { ...benchSettings(defaultMaxParallel()), quickAnswers: defaults.quickAnswers },
  });
  const rows: PromptCacheRow[] = [];
  try {
    // A cache of its own, empty at the start: nothing of the other sections' prompts is in it.
    await world.fake.configure({ ...world.fakeConfig, promptCache: true });
    await world.fake.flush();
    for (let round = 1; round <= options.rounds; round++) {
      for (const task of world.tasks) {
        const key = `cache-${task.id}-${round}-${crypto.randomUUID()}`;
        const end = await askAndWait(steward, key, `${taskTag(task.id, round)} ${task.request}`, waiters);
        const { calls } = await world.fake.flush();
        const correct = end.text?.includes(task.expected) ?? false;
        for (const c of calls.filter((x) => x.taskId === task.id && x.round === round && x.status === 200)) {
          const r = toRow(c, task, round, end.wallMs, correct);
          rows.push(r);
          options.onRow(r);
        }
      }
      options.log(`prompt cache: round ${round} of ${options.rounds}`);
    }
  } finally {
    await steward.shutdown();
    await world.fake.configure(world.fakeConfig);
  }
  return { rows, markdown: render(rows, world.tasks, options) };
}

function toRow(c: LlmCallRecord, task: BenchTask, round: number, wallMs: number, correct: boolean): PromptCacheRow {
  return {
    section: 'prompt-cache',
    task: task.id,
    shape: task.shape,
    round,
    role: c.role,
    inputTokens: c.inputTokens,
    outputTokens: c.outputTokens,
    cachedTokens: c.cachedTokens ?? 0,
    anthropic: c.anthropicCached ?? {},
    anthropicWritten: c.anthropicWritten ?? {},
    wallMs,
    correct,
  };
}

/** Tokens read under one rule: 'openai', or an Anthropic key. */
type Rule = 'none' | 'openai' | AnthropicKey;

function cachedBy(r: PromptCacheRow, rule: Rule): number {
  if (rule === 'none') return 0;
  return rule === 'openai' ? r.cachedTokens : (r.anthropic[rule] ?? 0);
}

/** The share of the calls' input tokens read from the cache under a rule. */
function share(rows: readonly PromptCacheRow[], rule: Rule): string {
  const input = sum(rows.map((r) => r.inputTokens));
  return input > 0 ? pct(sum(rows.map((r) => cachedBy(r, rule))) / input) : '';
}

/**
 * Anthropic's bill for the call's input, in tokens at the base input price: a read at a tenth of it, a write at 1.25
 * times it (the 5-minute cache), the rest at the base price.
 */
function billedTokens(r: PromptCacheRow, rule: AnthropicKey): number {
  const read = r.anthropic[rule] ?? 0;
  const written = r.anthropicWritten[rule] ?? 0;
  return r.inputTokens - read - written + 1.25 * written + 0.1 * read;
}

/** The latency model at scale 1 without jitter, the cached tokens charged no prefill (the fake's assumption). */
function modelledMs(r: PromptCacheRow, rule: Rule): number {
  const model = { ...DEFAULT_LATENCY, scale: 1, seed: 0 };
  return nominalLatencyMs(model, r.inputTokens - cachedBy(r, rule), r.outputTokens);
}

function render(
  rows: readonly PromptCacheRow[],
  tasks: readonly BenchTask[],
  options: { rounds: number; scale: number },
): string[] {
  const runs = new Map(rows.map((r) => [`${r.task}#${r.round}`, r]));
  const lines = [
    '#### 12. Prompt caching of the planner and front desk prompts',
    '',
    `${tasks.length} tasks × ${options.rounds} rounds, in order, one Steward with the defaults (quick answers on, the`,
    'planner beside the front desk) on tools declared read-only and closed-world; latency scale',
    `${options.scale}. ${[...runs.values()].filter((r) => r.correct).length}/${runs.size} runs answered right.`,
    "Shares are of the calls' input tokens read from the cache: OpenAI as simulated by the fake (longest prefix",
    'shared with an earlier prompt, 128-token steps from 1,024); Anthropic computed on the same prompts, the system',
    'prompt one marked block (single, before) or cut at line ends into marked blocks (split, after), for a model whose',
    'minimum is 1,024 tokens (Sonnet 4.5/4.6) and 4,096 (Haiku 4.5, Opus 4.5/4.6). Input tokens per call are means.',
    '',
    ...header([
      'Shape',
      'Role',
      'Calls',
      'Input per call',
      'OpenAI',
      'Anthropic single 1,024',
      'Anthropic split 1,024',
      'Anthropic 4,096 (single / split)',
    ]),
  ];
  const line = (label: string, role: string, mine: readonly PromptCacheRow[]) =>
    row([
      label,
      role,
      mine.length,
      int(sum(mine.map((r) => r.inputTokens)) / mine.length),
      share(mine, 'openai'),
      share(mine, 'single-1024'),
      share(mine, 'split-1024'),
      `${share(mine, 'single-4096')} / ${share(mine, 'split-4096')}`,
    ]);
  for (const shape of SHAPES) {
    for (const role of ROLES) {
      const mine = rows.filter((r) => r.shape === shape && r.role === role);
      if (mine.length > 0) lines.push(line(shape, role, mine));
    }
  }
  for (const role of ROLES) {
    const mine = rows.filter((r) => r.role === role);
    lines.push(
      line(
        '**all**, round 1',
        role,
        mine.filter((r) => r.round === 1),
      ),
    );
    lines.push(
      line(
        '**all**, later rounds',
        role,
        mine.filter((r) => r.round > 1),
      ),
    );
    lines.push(line('**all**', role, mine));
  }
  lines.push(
    '',
    'Modelled time of a call (the latency model at scale 1 without jitter: 250 ms, prefill at 20,000 tokens/s, decode at',
    '230 tokens/s), tokens read from the cache charged no prefill; the input tokens not read from the cache; and',
    "Anthropic's bill for the input in base-price tokens (a read at 0.1, a write at 1.25, minimum 1,024). Means per call.",
    '',
    ...header([
      'Role',
      'Rounds',
      'No cache ms',
      'OpenAI ms',
      'Anthropic single ms',
      'Anthropic split ms',
      'Uncached tokens (none / OpenAI / single / split)',
      'Anthropic billed (single / split)',
    ]),
  );
  const rules: Rule[] = ['none', 'openai', 'single-1024', 'split-1024'];
  for (const role of ROLES) {
    for (const [label, pick] of [
      ['1', (r: PromptCacheRow) => r.round === 1],
      ['2+', (r: PromptCacheRow) => r.round > 1],
    ] as const) {
      const mine = rows.filter((r) => r.role === role && pick(r));
      if (mine.length === 0) continue;
      const mean = (f: (r: PromptCacheRow) => number) => sum(mine.map(f)) / mine.length;
      lines.push(
        row([
          role,
          label,
          ...rules.map((rule) => int(mean((r) => modelledMs(r, rule)))),
          rules.map((rule) => int(mean((r) => r.inputTokens - cachedBy(r, rule)))).join(' / '),
          (['single-1024', 'split-1024'] as const).map((rule) => int(mean((r) => billedTokens(r, rule)))).join(' / '),
        ]),
      );
    }
  }
  return lines;
}

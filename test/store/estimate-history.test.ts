import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode, Json, StepStatus } from '../../src/engine/types.ts';
import { canonicalJson } from '../../src/engine/plan/canonical-json.ts';
import { argShape } from '../../src/engine/run/estimates.ts';
import { DEFAULT_HISTORY_WINDOW, PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { recordStatements, type StatementLog } from '../helpers/statement-log.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const LIST_STEP = createRevisionPlan().steps[0];
const LIST_ARGS = LIST_STEP?.kind === 'tool' ? LIST_STEP.args : {};

const DAY = 24 * 3600 * 1000;

describe.each(['postgres', 'pglite'] as const)('estimate history on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  /**
   * A run of the builder's plan (fs.list_directory, then an llm step) whose attempts took the given times; `args`
   * replace the list step's arguments as the plan writes them.
   */
  async function run(
    list: { ms: number; status?: StepStatus; code?: ErrorCode; daysAgo?: number; args?: Record<string, Json> },
    summaryMs: number,
  ): Promise<string> {
    const r = createNewRun();
    await store.createRun(r);
    const plan = createRevisionPlan();
    const [first, ...rest] = plan.steps;
    if (list.args && first?.kind === 'tool') plan.steps = [{ ...first, args: list.args }, ...rest];
    await store.saveRevision(r.id, 0, plan, 'planned', new Date());
    const ended = new Date(Date.now() - (list.daysAgo ?? 0) * DAY);
    for (const [stepId, ms, status, code] of [
      ['list', list.ms, list.status ?? 'succeeded', list.code],
      ['summary', summaryMs, 'succeeded', undefined],
    ] as const) {
      await store.recordStepStarted({ runId: r.id, stepId, attempt: 1, revision: 0, args: {}, at: ended });
      const error = code ? { code, message: code, retryable: false } : null;
      await store.recordStepEnded({
        runId: r.id,
        stepId,
        attempt: 1,
        status,
        output: null,
        error,
        at: ended,
        durationMs: ms,
      });
    }
    return r.id;
  }

  it('is empty before any run, and says so without guessing', async () => {
    expect(await new PgEstimateHistory(database.db).readEstimateHistory()).toEqual({
      tools: {},
      byArgs: {},
      byShape: {},
      roles: {},
    });
  });

  it("reads each tool's p50 and p90 over recent ended attempts, and per-role tokens, in one statement", async () => {
    for (const ms of [100, 200, 300, 400, 500]) await run({ ms }, ms * 10);
    // Neither an interrupted attempt, nor one stopped, nor one from a month ago says how long the tool takes.
    await run({ ms: 90_000, status: 'failed', code: 'interrupted' }, 3000);
    await run({ ms: 90_000, status: 'cancelled' }, 3000);
    const old = await run({ ms: 90_000, daysAgo: 30 }, 3000);
    const runs = await Promise.all([run({ ms: 300 }, 3000), run({ ms: 300 }, 3000)]);
    // Two planner calls in one run count as that run's planning; llm steps count per call.
    const calls = [
      [runs[0], 1000, 'gpt-old'],
      [runs[0], 1000, 'gpt-old'],
      [runs[1], 3000, 'gpt-old'],
      [runs[1], 0, 'gpt-new'],
    ] as const;
    for (const [i, [runId, input, model]] of calls.entries()) {
      const at = new Date(Date.now() - (10 - i) * 1000);
      await store.recordLlmUsage({ runId, role: 'planner', model, inputTokens: input, outputTokens: 100, at });
    }
    const at = new Date();
    await store.recordLlmUsage({
      runId: old,
      role: 'llm_step',
      model: 'gpt-new',
      inputTokens: 50,
      outputTokens: 10,
      at,
    });

    // The statement count is read on PostgreSQL, where a recording pool can watch the wire.
    const log: StatementLog | null = kind === 'postgres' ? recordStatements(database.name) : null;
    try {
      const history = await new PgEstimateHistory(log?.db ?? database.db).readEstimateHistory();
      if (log) expect(log.statements).toHaveLength(1);
      // list: 100, 200, 300, 300, 300, 400, 500 → p50 300, p90 440 (linear, as percentile_cont interpolates).
      expect(history.tools['fs.list_directory']).toEqual({ p50Ms: 300, p90Ms: 440, samples: 7 });
      // Every list step so far had the builder's arguments: the same numbers for the tool with those arguments.
      expect(history.byArgs?.['fs.list_directory']).toEqual({
        [canonicalJson(LIST_ARGS)]: { p50Ms: 300, p90Ms: 440, samples: 7 },
      });
      // One shape of arguments so far: the tool's own history, not a group of its own.
      expect(history.byShape).toEqual({});
      // Every llm step's attempt counts (the interrupted list attempts' runs still ran their summary).
      expect(history.tools.llm?.samples).toBe(9);
      expect(history.roles.planner).toEqual({
        input: { low: 2500, high: 2900 },
        output: { low: 200, high: 200 },
        samples: 2,
        model: 'gpt-new',
      });
      expect(history.roles.llm_step).toMatchObject({ input: { low: 50, high: 50 }, samples: 1 });
    } finally {
      await log?.close();
    }
  });

  it('reads the durations per tool and arguments as the plan wrote them, from 3 samples, newest groups first', async () => {
    // Key order in the plan does not split a group: jsonb compares by value, the engine keys by canonical JSON.
    await run({ ms: 1000, daysAgo: 1, args: { path: '/a', options: { x: 1, y: [2, 3] } } }, 10);
    await run({ ms: 2000, daysAgo: 1, args: { options: { y: [2, 3], x: 1 }, path: '/a' } }, 10);
    await run({ ms: 3000, daysAgo: 1, args: { path: '/a', options: { y: [2, 3], x: 1 } } }, 10);
    // Two samples say too little about these arguments; the tool's own numbers count them still.
    for (const ms of [5000, 5000]) await run({ ms, args: { path: '/b' } }, 10);
    for (const ms of [40, 50, 60]) await run({ ms, args: { path: '/c' } }, 10);

    const history = await new PgEstimateHistory(database.db).readEstimateHistory();
    const byArgs = history.byArgs?.['fs.list_directory'] ?? {};
    expect(byArgs[canonicalJson({ options: { x: 1, y: [2, 3] }, path: '/a' })]).toEqual({
      p50Ms: 2000,
      p90Ms: 2800,
      samples: 3,
    });
    expect(byArgs[canonicalJson({ path: '/c' })]).toEqual({ p50Ms: 50, p90Ms: 58, samples: 3 });
    expect(byArgs[canonicalJson({ path: '/b' })]).toBeUndefined();
    expect(history.tools['fs.list_directory']?.samples).toBe(15);

    // Only the most recently used groups are read: with room for two, the newest run's (its list and llm steps).
    const window = { ...DEFAULT_HISTORY_WINDOW, argGroups: 2 };
    const two = await new PgEstimateHistory(database.db, window).readEstimateHistory();
    const groups = Object.entries(two.byArgs ?? {}).flatMap(([tool, g]) => Object.keys(g).map((args) => [tool, args]));
    expect(groups.sort()).toEqual([
      ['fs.list_directory', canonicalJson({ path: '/c' })],
      ['llm', canonicalJson({ prompt: { $ref: 'steps.list.output.content[0].text' } })],
    ]);
  });

  it("reads the durations per tool and arguments' shape (names and value types), named as the engine names them", async () => {
    // So far: 10 calls with a path and options, 5 with a path alone (/b twice, /c three times).
    // A path given as a reference is another shape; arguments too large for a group of their own still have a shape.
    for (const ms of [7, 8, 9]) await run({ ms, args: { path: { $ref: 'steps.find.output.path' } } }, 10);
    await run({ ms: 70, args: { path: `/${'d'.repeat(3_000)}` } }, 10);

    const history = await new PgEstimateHistory(database.db).readEstimateHistory();
    const byShape = history.byShape?.['fs.list_directory'] ?? {};
    // A path never listed before is like /b, /c and the long one: 40, 50, 60, 70, 5000, 5000.
    expect(byShape[canonicalJson(argShape({ path: '/never-seen' }))]).toEqual({ p50Ms: 65, p90Ms: 5000, samples: 6 });
    expect(byShape[canonicalJson(argShape({ path: { $ref: 'steps.other.output' } }))]).toEqual({
      p50Ms: 8,
      p90Ms: 9,
      samples: 3,
    });
    expect(byShape[canonicalJson(argShape({ path: '/e', options: { x: 2 } }))]?.samples).toBe(10);
    expect(Object.keys(byShape)).toHaveLength(3);
    // llm steps were only ever called with a prompt from a reference: one shape, so no group apart from the tool's.
    expect(history.byShape?.llm).toBeUndefined();
  });
});

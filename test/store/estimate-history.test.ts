import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode, StepStatus } from '../../src/engine/types.ts';
import { PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { recordStatements, type StatementLog } from '../helpers/statement-log.ts';
import { createNewRun, createRevisionPlan } from './builders.ts';

const DAY = 24 * 3600 * 1000;

describe.each(['postgres', 'pglite'] as const)('estimate history on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  /** A run of the builder's plan (fs.list_directory, then an llm step) whose attempts took the given times. */
  async function run(
    list: { ms: number; status?: StepStatus; code?: ErrorCode; daysAgo?: number },
    summaryMs: number,
  ): Promise<string> {
    const r = createNewRun();
    await store.createRun(r);
    await store.saveRevision(r.id, 0, createRevisionPlan(), 'planned', new Date());
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
    expect(await new PgEstimateHistory(database.db).readEstimateHistory()).toEqual({ tools: {}, roles: {} });
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
});

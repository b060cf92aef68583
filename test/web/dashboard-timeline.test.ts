import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import type { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { ADA, BOB, createDashboard, DAN, seedRun } from './dashboard-fixtures.ts';

/** A person whose display name is markup. */
const HOSTILE: Actor = { id: 'U0EVE', name: '<b>Eve</b>', channel: 'slack' };

const T0 = Date.UTC(2026, 11, 1, 9, 0);
const at = (s: number) => new Date(T0 + s * 1000);

/** Stores one try at a step, from `start` to `end` seconds after T0. */
async function attempt(
  store: PgRunStore,
  runId: string,
  step: { stepId: string; attempt?: number; start: number; end: number; failed?: boolean },
) {
  const a = { runId, stepId: step.stepId, attempt: step.attempt ?? 1 };
  await store.recordStepStarted({ ...a, revision: 1, args: {}, at: at(step.start) });
  await store.recordStepEnded({
    ...a,
    status: step.failed ? 'failed' : 'succeeded',
    output: step.failed ? null : { content: [{ type: 'text', text: 'ok' }] },
    error: step.failed ? { code: 'tool_error', message: 'boom', retryable: true } : null,
    at: at(step.end),
    durationMs: (step.end - step.start) * 1000,
  });
}

describe('dashboard: the timeline tells queued, held and backing off apart', () => {
  let database: TestDatabase;
  let d: ReturnType<typeof createDashboard>;
  let dan: string;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    d = createDashboard(database);
    dan = await d.signIn(DAN);
  });
  afterAll(() => database?.close());

  it('shows a step paused by one person and resumed by another as queued then held, naming who resumed', async () => {
    const id = await seedRun(d.store, { requester: ADA, key: 'C1:1700000001.0001', at: at(-60) });
    const decide = (actor: Actor, action: 'pause' | 'resume', s: number) =>
      d.store.recordDecision({ runId: id, revision: 1, actor, action, accepted: true, at: at(s) });
    await attempt(d.store, id, { stepId: 'list', start: 0, end: 1, failed: true });
    await attempt(d.store, id, { stepId: 'list', attempt: 2, start: 3, end: 4 });
    await decide(BOB, 'pause', 6);
    await decide(HOSTILE, 'resume', 46);
    await attempt(d.store, id, { stepId: 'summary', start: 46, end: 47 });

    const text = await (await d.get(`/runs/${id}`, dan)).text();
    const titles = (kind: string) =>
      [...text.matchAll(new RegExp(`<rect\\s+class="wait ${kind}"[^>]*>\\s*<title>([^<]*)</title>`, 'g'))].map(
        (m) => m[1],
      );
    expect(titles('backoff')).toEqual(['list backing off 2.0 s before retry 1']);
    expect(titles('queued')).toEqual(['summary queued 2.0 s']);
    expect(titles('held')).toEqual(['summary held 40.0 s, until &lt;b&gt;Eve&lt;/b&gt; resumed']);
    expect(text).not.toContain('<b>Eve</b>');
    // The legend names what the timeline shows, and nothing it does not.
    const legend = [...text.matchAll(/data-legend="([^"]+)"/g)].map((m) => m[1]);
    expect(legend).toEqual(['queued', 'held', 'backing off', 'succeeded', 'failed', 'retry']);
    // The bars keep the attributes the browser test and scripts read.
    expect(text).toMatch(/<g class="bar" data-step="summary" data-attempt="1" data-state="succeeded">/);
  });
});

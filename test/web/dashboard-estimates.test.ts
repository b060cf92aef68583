import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { ADA, CAROL, createDashboard, DAN, seedRun } from './dashboard-fixtures.ts';

const HOSTILE = `<script>alert(1)</script><img src=x onerror=alert(2)>${'B'.repeat(5_000)}`;

describe('dashboard: estimate against actual', () => {
  let database: TestDatabase;
  let d: ReturnType<typeof createDashboard>;
  let ada: string;
  let dan: string;
  const id: Record<string, string> = {};

  /** A run of one step that took `tookMs`, with this estimate stored as approval (`estimated`) or auto-start would. */
  async function seed(
    name: string,
    options: {
      requester: Actor;
      key: string;
      minute: number;
      tookMs?: number;
      request?: string;
      status?: 'completed' | 'failed';
      /** What else happened to the run (a person's decisions, a restart). */
      then?: (runId: string, at: Date) => Promise<void>;
    },
    estimate?: { low: number; high: number; event: 'estimated' | 'autoApproved' },
  ) {
    const at = new Date(Date.UTC(2026, 11, 1, 9, options.minute));
    const runId = await seedRun(d.store, {
      requester: options.requester,
      key: options.key,
      request: options.request ?? name,
      at,
      ...(options.tookMs !== undefined && { status: options.status ?? ('completed' as const) }),
    });
    if (estimate) {
      const stored = {
        durationMs: { low: estimate.low, high: estimate.high },
        tokens: null,
        costMicroUsd: null,
        noHistory: [],
      };
      await d.store.appendEvent(runId, estimate.event, { revision: 1, estimate: stored }, at);
    }
    await d.store.recordStepStarted({ runId, stepId: 'list', attempt: 1, revision: 1, args: {}, at });
    if (options.tookMs !== undefined)
      await d.store.recordStepEnded({
        runId,
        stepId: 'list',
        attempt: 1,
        status: 'succeeded',
        output: { ok: true },
        error: null,
        at: new Date(at.getTime() + options.tookMs),
        durationMs: options.tookMs,
      });
    await options.then?.(runId, at);
    id[name] = runId;
  }

  /** A person's accepted decision on revision 1 of the run. */
  const decided = (action: 'approve' | 'pause' | 'resume') => (runId: string, at: Date) =>
    d.store.recordDecision({ runId, revision: 1, actor: ADA, action, accepted: true, at });

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    d = createDashboard(database);
    const c1 = { requester: ADA, key: 'C1:1700000001.0001' };
    await seed('inside', { ...c1, minute: 1, tookMs: 1_500 }, { low: 1_000, high: 2_000, event: 'estimated' });
    await seed('too slow', { ...c1, minute: 2, tookMs: 4_000 }, { low: 1_000, high: 2_000, event: 'estimated' });
    await seed('unestimated', { ...c1, minute: 3, tookMs: 3_000 });
    await seed(
      'hostile',
      { ...c1, minute: 4, tookMs: 500, request: HOSTILE },
      { low: 1_000, high: 2_000, event: 'autoApproved' },
    );
    await seed('still running', { ...c1, minute: 5 }, { low: 1_000, high: 2_000, event: 'estimated' });
    // Runs whose duration measures something else than the estimate: listed, not scored.
    const range = { low: 1_000, high: 2_000, event: 'estimated' as const };
    await seed(
      'paused',
      {
        ...c1,
        minute: 7,
        tookMs: 60_000,
        then: async (runId, at) => {
          await decided('approve')(runId, at);
          await decided('pause')(runId, at);
          await decided('resume')(runId, at);
        },
      },
      range,
    );
    await seed('failed', { ...c1, minute: 8, tookMs: 9_000, status: 'failed' }, range);
    await seed(
      'restarted',
      {
        ...c1,
        minute: 9,
        tookMs: 30_000,
        then: (runId, at) => d.store.appendEvent(runId, 'recovered', { interrupted: ['list'] }, at),
      },
      range,
    );
    await seed('approved once', { ...c1, minute: 10, tookMs: 1_800, then: decided('approve') }, range);
    await seed(
      'carol only',
      { requester: CAROL, key: 'C2:1700000009.0001', minute: 6, tookMs: 8_000 },
      { low: 1_000, high: 2_000, event: 'estimated' },
    );
    ada = await d.signIn(ADA);
    dan = await d.signIn(DAN);
  });
  afterAll(() => database?.close());

  /** The estimates page's rows: run id, the error cell. */
  const rows = (text: string) =>
    [...text.matchAll(/<tr data-run="([^"]+)">[\s\S]*?<td class="error">([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);

  it('lists the ended runs with an estimate, newest first, with the error: 0 % inside the range, else the distance as a % of the actual', async () => {
    const res = await d.get('/estimates', ada);
    expect(res.status).toBe(200);
    const text = await res.text();
    // Hostile: 500 ms against 1–2 s is 500 ms short of 500 ms, 100 %; too slow: 2 s over 4 s, 50 %.
    expect(rows(text)).toEqual([
      [id['approved once'], '0 %'],
      [id.restarted, '93 %'],
      [id.failed, '78 %'],
      [id.paused, '97 %'],
      [id.hostile, '100 %'],
      [id['too slow'], '50 %'],
      [id.inside, '0 %'],
    ]);
    expect(text).toContain('<td>1.0 s–2.0 s</td>');
    expect(text).toContain('<td>4.0 s</td>');
    // Scored: only the runs that ran undisturbed (inside, too slow, approved once); the rest say why not.
    const scored = [...text.matchAll(/<tr data-run="([^"]+)">[\s\S]*?<td class="scored">([^<]*)<\/td>/g)];
    expect(Object.fromEntries(scored.map((m) => [m[1], m[2]]))).toEqual({
      [id['approved once']!]: 'yes',
      [id.restarted!]: 'no: Steward restarted during it',
      [id.failed!]: 'no: it ended failed',
      [id.paused!]: 'no: a person paused, held or changed it',
      [id.hostile!]: 'no: it took under a second',
      [id['too slow']!]: 'yes',
      [id.inside!]: 'yes',
    });
    const medians = /<p id="medians">([\s\S]*?)<\/p>/.exec(text)?.[1]?.replace(/\s+/g, ' ').trim();
    expect(medians).toBe(
      'Median error: 0 % over the last 3 undisturbed runs, 0 % over all 3 shown. 4 more shown, not scored.',
    );
    const chart = /<svg[^>]*id="error-chart"[\s\S]*?<\/svg>/.exec(text)?.[0] ?? '';
    expect([...chart.matchAll(/<circle class="dot"/g)]).toHaveLength(3);
    expect(text).toContain('href="/estimates"');
  });

  it('leaves out runs without an estimate, runs not ended, and, for someone not an approver, runs they may not see', async () => {
    const ids = rows(await (await d.get('/estimates', ada)).text()).map(([runId]) => runId);
    expect(ids).not.toContain(id.unestimated);
    expect(ids).not.toContain(id['still running']);
    expect(ids).not.toContain(id['carol only']);
    // The approver sees Carol's run too: 8 s against 1–2 s is 75 %.
    expect(rows(await (await d.get('/estimates', dan)).text())).toContainEqual([id['carol only'], '75 %']);
  });

  it('shows hostile request text escaped and cut', async () => {
    const res = await d.get('/estimates', ada);
    const text = await res.text();
    expect(text).not.toContain('<script>alert');
    expect(text).not.toContain('<img src=x');
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text).not.toContain('B'.repeat(1_000));
    expect(text).not.toMatch(/<script\b/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('says estimate, actual and error on a run page, the range alone while it runs, and "no estimate" without one', async () => {
    const line = async (name: string) => {
      const text = await (await d.get(`/runs/${id[name]}`, ada)).text();
      return (/<p id="estimate">([\s\S]*?)<\/p>/.exec(text)?.[1] ?? '').replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    };
    expect(await line('too slow')).toBe('Estimate: 1.0 s–2.0 s · took 4.0 s · error 50 %');
    expect(await line('inside')).toBe('Estimate: 1.0 s–2.0 s · took 1.5 s · error 0 %');
    expect(await line('still running')).toBe('Estimate: 1.0 s–2.0 s');
    expect(await line('unestimated')).toBe('Estimate: no estimate');
  });

  it('refuses the page to someone not signed in', async () => {
    expect((await d.get('/estimates')).status).toBe(401);
  });
});

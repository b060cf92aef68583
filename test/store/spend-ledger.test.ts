import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_SPEND_CAPS, type SpendCaps, type SpendRequest } from '../../src/engine/spend.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createNewRun } from './builders.ts';

/** Caps with only these set (micro-dollars). */
function caps(set: Partial<{ [S in keyof SpendCaps]: Partial<SpendCaps[S]> }>): SpendCaps {
  return {
    channel: { ...NO_SPEND_CAPS.channel, ...set.channel },
    workspace: { ...NO_SPEND_CAPS.workspace, ...set.workspace },
    person: { ...NO_SPEND_CAPS.person, ...set.person },
  };
}

const roomy = { perRun: 10_000_000, perUserPerDay: 100_000_000 };
const windows = { day: '2026-12-05', month: '2026-12-01' };
/** $1 per million input tokens, $4 per million output tokens: 1 and 4 micro-dollars a token. */
const price = { input: 1, output: 4 };
const spend = (c: SpendCaps, w = windows): SpendRequest => ({ price, caps: c, windows: w });

describe.each(['postgres', 'pglite'] as const)('spend caps on %s', (kind) => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  /** A run in a Slack thread of a channel of its own (so tests do not share a channel's totals). */
  async function newRun(o: { channel?: string; person?: string; place?: boolean } = {}) {
    const channel = o.channel ?? `C${randomUUID().slice(0, 8).toUpperCase()}`;
    const run = createNewRun({
      conversation: { channel: 'slack', key: `${channel}:${Date.now()}.${randomUUID().slice(0, 6)}` },
      requester: { id: o.person ?? `U${randomUUID().slice(0, 8)}`, name: 'Ada', channel: 'slack' },
      ...(o.place !== false && { place: channel }),
    });
    await store.createRun(run);
    return { run, channel };
  }

  it('grants the largest output cap the spend caps hold, charges prompt and cap at their prices, names the cap', async () => {
    const { run } = await newRun();
    const want = { prompt: 1_000, output: 4_000, minOutput: 256 };
    // 1,000 × 1 + 4,000 × 4 = 17,000 micro-dollars fits a $0.05 daily cap of the channel whole.
    const c = caps({ channel: { day: 50_000 } });
    expect(await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(c))).toEqual({
      ok: true,
      cap: 4_000,
      spendMicroUsd: 17_000,
    });
    // 33,000 left: after the prompt's 1,000, 8,000 output tokens would fit, but the call asks 4,000; a 20,000 cap
    // leaves 3,000: (3,000 − 1,000) / 4 = 500 tokens.
    const tight = caps({ channel: { day: 20_000 } });
    expect(await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(tight))).toEqual({
      ok: true,
      cap: 500,
      limitedBy: 'channel-day',
      spendMicroUsd: 3_000,
    });
    // Nothing left: refused, naming the cap and what is left.
    expect(await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(tight))).toEqual({
      ok: false,
      refusedBy: 'channel-day',
      leftMicroUsd: 0,
    });
    const spent = await store.runSpend(run.id, run.requester, windows);
    expect(spent.runMicroUsd).toBe(20_000);
    expect(spent.totals).toEqual(
      expect.arrayContaining([
        { scope: 'channel', period: 'day', spentMicroUsd: 20_000 },
        { scope: 'channel', period: 'month', spentMicroUsd: 20_000 },
        { scope: 'person', period: 'day', spentMicroUsd: 20_000 },
      ]),
    );
    // The refused call took no tokens either.
    const { rows } = await sql<{ n: number }>`select tokens_used as n from runs where id = ${run.id}`.execute(
      database.db,
    );
    expect(rows[0]?.n).toBe(1_000 + 4_000 + 1_000 + 500);
  });

  it('every scope and window counts: a monthly cap refuses on another day, a person is capped across channels', async () => {
    const person = `U${randomUUID().slice(0, 8)}`;
    const { run: first } = await newRun({ person });
    const { run: second } = await newRun({ person });
    const want = { prompt: 0, output: 1_000, minOutput: 1_000 };
    const c = caps({ person: { month: 6_000 } });
    expect((await store.reserveTokens(first.id, first.requester, want, roomy, windows.day, spend(c))).ok).toBe(true);
    // Another channel, another day of the month: the person's month holds 2,000 more, not 4,000.
    const later = { day: '2026-12-20', month: '2026-12-01' };
    expect(await store.reserveTokens(second.id, second.requester, want, roomy, later.day, spend(c, later))).toEqual({
      ok: false,
      refusedBy: 'person-month',
      leftMicroUsd: 2_000,
    });
    // Next month starts afresh.
    const january = { day: '2027-01-02', month: '2027-01-01' };
    expect(
      (await store.reserveTokens(second.id, second.requester, want, roomy, january.day, spend(c, january))).ok,
    ).toBe(true);
  });

  it('a channel counts every run talking in it: threads, and runs stored without a place in a thread of one', async () => {
    const { run, channel } = await newRun();
    // A workflow's fire or an amendment run is stored without a place: it counts for its thread's channel.
    const placeless = createNewRun({ conversation: run.conversation, requester: run.requester });
    await store.createRun(placeless);
    const { run: sameChannel } = await newRun({ channel });
    const want = { prompt: 0, output: 1_000, minOutput: 1_000 };
    const c = caps({ channel: { day: 8_000 } });
    for (const r of [run, placeless]) {
      expect((await store.reserveTokens(r.id, r.requester, want, roomy, windows.day, spend(c))).ok).toBe(true);
    }
    expect(
      await store.reserveTokens(sameChannel.id, sameChannel.requester, want, roomy, windows.day, spend(c)),
    ).toEqual({ ok: false, refusedBy: 'channel-day', leftMicroUsd: 0 });
  });

  it('settling moves the totals to what the call charged and notes its channel; a failed call gives all back', async () => {
    const { run, channel } = await newRun();
    const want = { prompt: 100, output: 1_000, minOutput: 256 };
    const granted = await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(NO_SPEND_CAPS));
    expect(granted).toMatchObject({ ok: true, cap: 1_000, spendMicroUsd: 4_100 });
    const usage = { role: 'llm_step' as const, model: 'm-1', inputTokens: 120, outputTokens: 200, at: new Date() };
    // Charged 120 + 800 = 920.
    const settle = { runId: run.id, actor: run.requester, day: windows.day, delta: 320 - 1_100 };
    await store.settleTokens({
      ...settle,
      usage: { ...usage, chargedMicroUsd: 920 },
      spend: { delta: 920 - 4_100, windows },
    });
    expect((await store.runSpend(run.id, run.requester, windows)).runMicroUsd).toBe(920);
    const rows = await database.db
      .selectFrom('llm_usage')
      .select(['charged_micro_usd', 'spend_channel'])
      .where('run_id', '=', run.id)
      .execute();
    expect(rows.map((r) => [Number(r.charged_micro_usd), r.spend_channel])).toEqual([[920, `slack:${channel}`]]);
    const again = await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(NO_SPEND_CAPS));
    await store.settleTokens({
      ...settle,
      delta: -1_100,
      usage: null,
      spend: { delta: -(again.ok ? (again.spendMicroUsd ?? 0) : 0), windows },
    });
    expect((await store.runSpend(run.id, run.requester, windows)).totals).toContainEqual({
      scope: 'channel',
      period: 'day',
      spentMicroUsd: 920,
    });
  });

  it('a run an approver exempted goes past the caps (its token budget still bounds it)', async () => {
    const { run } = await newRun();
    const want = { prompt: 0, output: 1_000, minOutput: 1_000 };
    const c = caps({ workspace: { day: 1 } });
    const refused = await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(c));
    expect(refused).toMatchObject({ ok: false, refusedBy: 'workspace-day' });
    await store.transition(run.id, ['planning'], 'running', { spendExempt: true });
    expect((await store.runSpend(run.id, run.requester, windows)).exempt).toBe(true);
    expect(await store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(c))).toEqual({
      ok: true,
      cap: 1_000,
      spendMicroUsd: 4_000,
    });
    const budget = { perRun: 1_500, perUserPerDay: 100_000 };
    expect(await store.reserveTokens(run.id, run.requester, want, budget, windows.day, spend(c))).toEqual({
      ok: false,
      refusedBy: 'run',
    });
  });

  it('spend by channel, person and model for the day and the month; narrowed to the asker and their channel', async () => {
    const month = { day: '2027-03-09', month: '2027-03-01' };
    const { run: a, channel } = await newRun();
    const { run: b } = await newRun();
    const charge = async (run: typeof a, model: string, micro: number, at: Date) => {
      const settle = { runId: run.id, actor: run.requester, day: month.day, delta: 0 };
      const usage = { role: 'llm_step' as const, model, inputTokens: 1, outputTokens: 1, chargedMicroUsd: micro, at };
      await store.settleTokens({ ...settle, usage, spend: { delta: micro, windows: month } });
    };
    // Opens the windows (the first reservation of each run does that), at no price.
    for (const run of [a, b]) {
      await store.reserveTokens(run.id, run.requester, { prompt: 0, output: 1, minOutput: 1 }, roomy, month.day, {
        price: { input: 0, output: 0 },
        caps: NO_SPEND_CAPS,
        windows: month,
      });
    }
    await charge(a, 'gpt-x', 1_000, new Date('2027-03-09T08:00:00Z'));
    await charge(a, 'gpt-y', 2_000, new Date('2027-03-02T08:00:00Z'));
    await charge(b, 'gpt-x', 5_000, new Date('2027-03-09T23:59:00Z'));
    await charge(b, 'gpt-x', 7_000, new Date('2027-02-28T23:59:00Z'));
    const who = { channelKey: `slack:${channel}`, person: a.requester, narrow: false, limit: 20 };
    const report = await store.spendReport(month, who);
    expect(report.byModel).toEqual([
      { key: 'gpt-x', dayMicroUsd: 6_000, monthMicroUsd: 6_000 },
      { key: 'gpt-y', dayMicroUsd: 0, monthMicroUsd: 2_000 },
    ]);
    expect(report.byPerson.map((p) => [p.key, p.name, p.dayMicroUsd, p.monthMicroUsd])).toEqual([
      [`slack:${b.requester.id}`, 'Ada', 5_000, 5_000],
      [`slack:${a.requester.id}`, 'Ada', 1_000, 3_000],
    ]);
    expect(report.byChannel).toHaveLength(2);
    expect(report.totals).toContainEqual({ scope: 'channel', period: 'month', spentMicroUsd: 3_000 });
    // Totals count in the windows a call was reserved in (March here), whatever time its usage row carries.
    expect(report.totals).toContainEqual({ scope: 'workspace', period: 'month', spentMicroUsd: 15_000 });
    const narrow = await store.spendReport(month, { ...who, narrow: true });
    expect(narrow.byPerson.map((p) => p.key)).toEqual([`slack:${a.requester.id}`]);
    expect(narrow.byChannel.map((c) => c.key)).toEqual([`slack:${channel}`]);
    expect(narrow.byModel.map((m) => m.key)).toEqual(['gpt-y', 'gpt-x']);
  });
});

describe('spend caps under concurrent reservations on postgres', () => {
  let database: TestDatabase;
  let store: PgRunStore;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    store = new PgRunStore(database.db);
  });
  afterAll(() => database?.close());

  it('40 calls at once from one pool never reserve past the workspace cap; each window moves with the others', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const run = createNewRun({ place: `C${i % 3}`, requester: { id: `U${i % 4}`, channel: 'slack' } });
        await store.createRun(run);
        return run;
      }),
    );
    const c = caps({ workspace: { day: 100_000 } });
    const want = { prompt: 500, output: 2_000, minOutput: 256 };
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const run = runs[i % runs.length]!;
        return store.reserveTokens(run.id, run.requester, want, roomy, windows.day, spend(c));
      }),
    );
    const taken = results.reduce((n, r) => n + (r.ok ? (r.spendMicroUsd ?? 0) : 0), 0);
    expect(taken).toBeLessThanOrEqual(100_000);
    // 8,500 a whole call: 11 fit, then one lowered to the 6,500 left ((6,500 − 500) / 4 = 1,500 tokens).
    expect(taken).toBe(100_000);
    expect(results.filter((r) => !r.ok)).toHaveLength(40 - 12);
    const totals = await sql<{ scope: string; period: string; micro_usd: string }>`
      select scope, period, sum(micro_usd)::text as micro_usd from spend_totals group by scope, period`.execute(
      database.db,
    );
    expect(totals.rows.map((r) => Number(r.micro_usd))).toEqual(Array(6).fill(100_000));
  });
});

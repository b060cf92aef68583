/**
 * The metrics adapter on its own: scrapes within 5 s share one read of the runs by status (a scraper polling every
 * second cannot load the database), a failed read leaves the gauge empty and says why, and several registries in one
 * process never share a series.
 */
import { expect, it } from 'vitest';
import { PromMetrics } from '../src/metrics.ts';
import { parsePromText } from './helpers/prom-text.ts';

it('reads runs by status at most every 5 s however often it is scraped, and a failed read is not kept', async () => {
  let now = 0;
  let reads = 0;
  let down = false;
  const logs: string[] = [];
  const metrics = new PromMetrics({
    runsByStatus: async () => {
      reads += 1;
      if (down) throw new Error('database unreachable');
      return { running: reads, completed: 2 };
    },
    runsLeased: () => 3,
    now: () => now,
    log: (level, m) => logs.push(`${level} ${m}`),
  });
  const runs = async () =>
    parsePromText((await metrics.render()).body)
      .samples.filter((s) => s.name === 'steward_runs' || s.name === 'steward_runs_leased')
      .map((s) => `${s.name}${s.labels.status ? `{${s.labels.status}}` : ''} ${s.value}`);

  expect(await runs()).toEqual(['steward_runs{running} 1', 'steward_runs{completed} 2', 'steward_runs_leased 3']);
  now = 4_999;
  await Promise.all([runs(), runs()]);
  expect(reads).toBe(1);
  now = 5_000;
  expect(await runs()).toContain('steward_runs{running} 2');
  expect(reads).toBe(2);

  down = true;
  now = 10_000;
  expect(await runs()).toEqual(['steward_runs_leased 3']);
  expect(logs).toEqual(['warn metrics: runs by status not read: database unreachable']);
  down = false;
  expect(await runs()).toContain('steward_runs{running} 4');
});

it('keeps each process its own series: two registries count apart', async () => {
  const sources = { runsByStatus: async () => ({}), runsLeased: () => 0 };
  const a = new PromMetrics(sources);
  const b = new PromMetrics(sources);
  a.stepEnded('everything.echo', 'ok', 0.2);
  a.rateLimited('slack', 'chat.update');
  const count = async (m: PromMetrics, name: string) =>
    parsePromText((await m.render()).body).samples.find((s) => s.name === name)?.value;
  expect(await count(a, 'steward_step_duration_seconds_count')).toBe(1);
  expect(await count(a, 'steward_outbox_rate_limited_total')).toBe(1);
  expect(await count(b, 'steward_step_duration_seconds_count')).toBeUndefined();
});

it('reads the runs awaiting an owner like the runs by status: at most every 5 s, NaN (unknown) while the read fails', async () => {
  let now = 0;
  let reads = 0;
  let down = false;
  const logs: string[] = [];
  const metrics = new PromMetrics({
    runsByStatus: async () => ({}),
    runsAwaitingOwner: async () => {
      reads += 1;
      if (down) throw new Error('database unreachable');
      return reads;
    },
    runsLeased: () => 0,
    now: () => now,
    log: (level, m) => logs.push(`${level} ${m}`),
  });
  const awaiting = async () =>
    parsePromText((await metrics.render()).body).samples.find((s) => s.name === 'steward_runs_awaiting_owner')?.value;
  expect(await awaiting()).toBe(1);
  now = 4_999;
  expect(await awaiting()).toBe(1);
  down = true;
  now = 5_000;
  expect(await awaiting()).toBeNaN();
  expect(logs).toEqual(['warn metrics: runs awaiting an owner not read: database unreachable']);
  down = false;
  expect(await awaiting()).toBe(3);
});

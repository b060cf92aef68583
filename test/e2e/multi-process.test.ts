/**
 * Several Steward processes on one PostgreSQL (issue 10, item 2), end to end: real entry points (`src/main.ts`) in
 * Slack HTTP mode against the fake Slack, on a private cluster, with the chaos fixture server logging every call it
 * really receives (test/chaos/chaos-cluster.ts). What a person would notice is checked: which process called what,
 * how many times, the run's end and its reports.
 */
import { afterEach, expect, it } from 'vitest';
import { SIGNING_SECRET, startChaosCluster, type AuditLine, type ChaosCluster } from '../chaos/chaos-cluster.ts';
import { requestText, stepTag } from '../chaos/chaos-plans.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing } from '../helpers/private-postgres.ts';
import { startOtlpCollector } from '../helpers/otlp-collector.ts';
import { buttonOf, cardOf, createSlackDelivery, postsIn, reportsIn } from '../helpers/slack-delivery.ts';
import type { StewardProcess } from '../helpers/steward-process.ts';
import { waitUntil } from '../helpers/wait.ts';

describeNeeding(privatePostgresMissing, 'several processes on one database', () => {
  let cluster: ChaosCluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  /** Two processes on a fresh private cluster, both listening. */
  async function twoProcesses(env: Record<string, string>): Promise<[StewardProcess, StewardProcess, ChaosCluster]> {
    const c = await startChaosCluster({ processes: 2, env });
    cluster = c;
    const [p1, p2] = c.processes as [StewardProcess, StewardProcess];
    await Promise.all([p1.start(), p2.start()]);
    return [p1, p2, c];
  }

  /** Who received which call of request 1, in order: `[caller, type, step]`. */
  const received = (c: ChaosCluster, types: AuditLine['type'][] = ['call']) =>
    c
      .audit()
      .filter((l) => types.includes(l.type) && l.args.tag?.startsWith('k1.'))
      .map((l) => [l.caller, l.type, l.args.tag?.slice(3)]);

  const callOf = (c: ChaosCluster, caller: string, step: string, type: AuditLine['type'] = 'call') =>
    c.audit().some((l) => l.caller === caller && l.type === type && l.args.tag === stepTag(1, step));

  async function runRow(c: ChaosCluster, threadTs: string) {
    const { rows } = await c.pool.query<{ id: string; status: string }>(
      'SELECT id, status FROM runs WHERE conversation_key LIKE $1',
      [`%${threadTs}`],
    );
    return rows[0];
  }

  async function mention(c: ChaosCluster, to: StewardProcess, template: string): Promise<string> {
    const sent = await c.delivery.mention(() => to.eventsUrl, { text: requestText(1, template), user: 'U0ADA' });
    expect(sent.ok).toBe(true);
    return sent.threadTs;
  }

  it('a run whose process hangs is taken over when its lease lapses; back, the old process calls and records nothing more', async () => {
    const [p1, , c] = await twoProcesses({ STEWARD_LEASE_SECONDS: '1.5' });
    const thread = await mention(c, p1, 'long');
    await waitUntil('p1 to call step a', () => callOf(c, 'p1', 'a'));
    p1.signal('SIGSTOP');
    // Step a (read-only, idempotent) was in flight at p1: p2 runs it again once p1's lease lapses.
    await waitUntil('p2 to take the run over and call step a', () => callOf(c, 'p2', 'a'), { timeoutMs: 30_000 });
    p1.signal('SIGCONT');
    await waitUntil('p1 to notice it lost the run', () => /another process took it over/.test(p1.log()), {
      timeoutMs: 30_000,
      details: () => p1.log(),
    });
    await waitUntil('the report', () => reportsIn(c.slack, thread).length > 0, { timeoutMs: 30_000 });
    expect((await runRow(c, thread))?.status).toBe('completed');
    expect(received(c)).toEqual([
      ['p1', 'call', 'a'],
      ['p2', 'call', 'a'],
      ['p2', 'call', 'b'],
    ]);
    expect(reportsIn(c.slack, thread)).toEqual(['completed']);
    // What p1 learned after it woke (step a's result) was refused by the fence, not stored over p2's attempts.
    const { rows } = await c.pool.query<{ attempt: number; status: string; error: { code: string } | null }>(
      "SELECT attempt, status, error FROM step_attempts WHERE step_id = 'a' ORDER BY attempt",
    );
    expect(rows.map((r) => [r.attempt, r.status, r.error?.code ?? null])).toEqual([
      [1, 'failed', 'interrupted'],
      [2, 'succeeded', null],
    ]);
  });

  it('Stop pressed through a process that does not drive the run cancels the call in flight at the one that does', async () => {
    const [p1, p2, c] = await twoProcesses({});
    const thread = await mention(c, p1, 'long');
    await waitUntil('p1 to call step a', () => callOf(c, 'p1', 'a'));
    const card = cardOf(c.slack, thread);
    expect(card && buttonOf(card, 'stop')).toBeTruthy();
    const pressed = await c.delivery.press(() => p2.eventsUrl, card!, 'stop');
    expect(pressed.ok).toBe(true);
    await waitUntil('the server to receive the cancellation', () => callOf(c, 'p1', 'a', 'cancelled'));
    await waitUntil('the report', () => reportsIn(c.slack, thread).length > 0);
    expect((await runRow(c, thread))?.status).toBe('stopped');
    expect(reportsIn(c.slack, thread)).toEqual(['stopped']);
    expect(received(c, ['call', 'cancelled'])).toEqual([
      ['p1', 'call', 'a'],
      ['p1', 'cancelled', 'a'],
    ]);
    const { rows } = await c.pool.query<{ action: string; accepted: boolean }>(
      'SELECT action, accepted FROM decisions ORDER BY id',
    );
    expect(rows).toEqual([{ action: 'stop', accepted: true }]);
  });

  it('SIGTERM lets the step in flight end, then hands the run over at once (long before its lease would lapse)', async () => {
    const [p1, , c] = await twoProcesses({ STEWARD_LEASE_SECONDS: '600' });
    const thread = await mention(c, p1, 'long');
    await waitUntil('p1 to call step a', () => callOf(c, 'p1', 'a'));
    await p1.kill('SIGTERM');
    expect(callOf(c, 'p1', 'a', 'ended')).toBe(true);
    await waitUntil('p2 to carry on with step b', () => callOf(c, 'p2', 'b'));
    await waitUntil('the report', () => reportsIn(c.slack, thread).length > 0);
    expect((await runRow(c, thread))?.status).toBe('completed');
    expect(reportsIn(c.slack, thread)).toEqual(['completed']);
    expect(received(c, ['call', 'cancelled'])).toEqual([
      ['p1', 'call', 'a'],
      ['p2', 'call', 'b'],
    ]);
    // Nothing was in flight at the handover, so nothing about the run changed: the thread is not told of a restart.
    expect(postsIn(c.slack, thread).filter((text) => /restarted/i.test(text))).toEqual([]);
  });

  it('traces a run that a SIGTERM handed over as one trace: each process sends its own spans, the last one the run span', async () => {
    const collector = await startOtlpCollector();
    try {
      const [p1, , c] = await twoProcesses({
        STEWARD_LEASE_SECONDS: '600',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      });
      const thread = await mention(c, p1, 'long');
      await waitUntil('p1 to call step a', () => callOf(c, 'p1', 'a'));
      // p1's spans are still batched (every 5 s by default): its SIGTERM sends them before it exits.
      await p1.kill('SIGTERM');
      const stepSpan = (id: string) => collector.spans.find((s) => s.attributes['steward.step.id'] === id);
      expect(stepSpan('a')?.resource['service.instance.id']).toBeDefined();
      await waitUntil('the report', () => reportsIn(c.slack, thread).length > 0);
      const run = await runRow(c, thread);
      const root = await waitUntil('the run span', () => collector.spans.find((s) => s.name === 'steward.run'), {
        timeoutMs: 30_000,
      });
      await waitUntil("p2's step span", () => stepSpan('b'));
      expect(collector.refused).toEqual([]);
      expect(root.attributes).toMatchObject({ 'steward.run.id': run?.id, 'steward.run.status': 'completed' });
      const [a, b] = [stepSpan('a'), stepSpan('b')];
      // Two processes, one trace, one root: each step's span under it.
      expect(a?.resource['service.instance.id']).not.toBe(b?.resource['service.instance.id']);
      expect(root.resource['service.instance.id']).toBe(b?.resource['service.instance.id']);
      for (const s of collector.spans.filter((x) => x !== root)) {
        expect(s.traceId).toBe(root.traceId);
        expect(s.parentSpanId).toBe(root.spanId);
      }
      expect([a?.attributes['steward.step.outcome'], b?.attributes['steward.step.outcome']]).toEqual(['ok', 'ok']);
      expect(collector.bodies.join('')).not.toContain(stepTag(1, 'a'));
    } finally {
      await collector.close();
    }
  });

  it("a mention that arrives while PostgreSQL is away is refused, not lost: the process that took it is killed, and Slack's retry becomes one run", async () => {
    const [p1, p2, c] = await twoProcesses({});
    await c.postgres.stop();
    // The first try reaches p1, which cannot store the request; then p1 dies and the database comes back, and Slack's
    // retries (as many as it takes, here) reach p2. Before, p1 answered 200 after 2.5 s and the request was lost.
    let picks = 0;
    let ready = false;
    const patient = createSlackDelivery({ slack: c.slack, signingSecret: SIGNING_SECRET, retries: 60 });
    const sent = await patient.mention(
      () => {
        picks++;
        if (picks === 1) return p1.eventsUrl;
        if (picks === 2)
          void (async () => {
            await p1.kill('SIGKILL');
            await c.postgres.start();
            ready = true;
          })();
        return ready ? p2.eventsUrl : undefined;
      },
      { text: requestText(1, 'long'), user: 'U0ADA' },
    );
    expect(sent.tries[0]).toMatchObject({ url: p1.eventsUrl, status: 500 });
    expect(sent.ok).toBe(true);
    await waitUntil('the report', () => reportsIn(c.slack, sent.threadTs).length > 0, { timeoutMs: 30_000 });
    const { rows } = await c.pool.query<{ status: string }>('SELECT status FROM runs');
    expect(rows).toEqual([{ status: 'completed' }]);
    expect(received(c)).toEqual([
      ['p2', 'call', 'a'],
      ['p2', 'call', 'b'],
    ]);
  });
});

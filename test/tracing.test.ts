/**
 * src/tracing.ts against a local OTLP receiver: a run worked on by two processes (a restart, a hand-over) lands in
 * one trace under one run span, whichever process ends it; a failed attempt carries its error code but not its
 * message (it may quote the tool's output) unless content is opted in; with `STEWARD_OTEL_CONTENT=on` arguments and
 * outputs come, cut short, with secrets masked.
 */
import { afterEach, expect, it } from 'vitest';
import type { StepAttemptTelemetry } from '../src/engine/run-telemetry.ts';
import { OtelTracing, type RunFacts } from '../src/tracing.ts';
import { startOtlpCollector, type OtlpCollector } from './helpers/otlp-collector.ts';

let collector: OtlpCollector | undefined;
afterEach(async () => {
  await collector?.close();
});

const SECRET = 'xoxb-secret-token-123456';
const created = new Date('2026-12-01T10:00:00.000Z');
const at = (s: number) => new Date(created.getTime() + s * 1000);

function tracing(
  url: string,
  o: { instanceId: string; content?: boolean; facts?: RunFacts | null; log?: (m: string) => void },
): OtelTracing {
  return new OtelTracing({
    url: `${url}/v1/traces`,
    serviceName: 'steward-test',
    content: o.content ?? false,
    secrets: [SECRET],
    instanceId: o.instanceId,
    log: (_level, m) => o.log?.(m),
    describeRun: () => Promise.resolve(o.facts === undefined ? { createdAt: created, route: 'plan' } : o.facts),
  });
}

function attempt(over: Partial<StepAttemptTelemetry>): StepAttemptTelemetry {
  return {
    runId: 'run-1',
    stepId: 'mail',
    attempt: 1,
    tool: 'mail.send',
    outcome: 'ok',
    startedAt: at(1),
    endedAt: at(2),
    args: { to: 'ada@example.com', apiKey: 'k-123', note: `uses ${SECRET}` },
    output: { sent: true },
    ...over,
  };
}

it('puts the stretches of a run from two processes in one trace, under the run span the last one writes', async () => {
  collector = await startOtlpCollector();
  // The first process: an attempt that failed, then it stopped (a deploy) without ending the run.
  const first = tracing(collector.url, { instanceId: 'process-a' });
  first.stepAttemptEnded(attempt({ outcome: 'timeout', error: 'mail.send: no answer about ada@example.com' }));
  await first.close();
  // The next one took the run over: the attempt again, a model call, the run's end.
  const second = tracing(collector.url, { instanceId: 'process-b' });
  second.stepAttemptEnded(attempt({ attempt: 2, startedAt: at(5), endedAt: at(6) }));
  second.modelCalled({
    runId: 'run-1',
    role: 'synthesizer',
    model: 'gpt-test',
    inputTokens: 10,
    outputTokens: 5,
    startedAt: at(7),
    endedAt: at(8),
  });
  second.runEnded({ runId: 'run-1', status: 'completed', at: at(9) });
  await second.close();

  const spans = collector.spans;
  expect(spans).toHaveLength(4);
  const root = spans.find((s) => s.name === 'steward.run');
  expect(root?.resource['service.instance.id']).toBe('process-b');
  expect(root?.startNs).toBe(BigInt(created.getTime()) * 1_000_000n);
  expect(root?.endNs).toBe(BigInt(at(9).getTime()) * 1_000_000n);
  for (const s of spans.filter((x) => x !== root)) {
    expect(s.traceId).toBe(root?.traceId);
    expect(s.parentSpanId).toBe(root?.spanId);
  }
  const tries = spans.filter((s) => s.name === 'execute_tool mail.send');
  expect(tries.map((s) => [s.resource['service.instance.id'], s.attributes['steward.step.attempt']])).toEqual([
    ['process-a', 1],
    ['process-b', 2],
  ]);
  const failed = tries[0];
  expect(failed?.attributes['error.type']).toBe('timeout');
  expect(failed?.status).toEqual({ code: 2, message: 'timeout' });
  expect(collector.bodies.join('')).not.toContain('ada@example.com');
});

it('with content opted in, carries arguments and outputs, secrets masked and cut short', async () => {
  collector = await startOtlpCollector();
  const t = tracing(collector.url, { instanceId: 'p', content: true });
  t.stepAttemptEnded(attempt({ output: { text: 'x'.repeat(5_000) } }));
  t.stepAttemptEnded(attempt({ stepId: 'again', outcome: 'tool_error', error: `refused ${SECRET}`, output: null }));
  await t.close();
  const [ok, failed] = collector.spans;
  expect(JSON.parse(String(ok?.attributes['steward.step.args']))).toEqual({
    to: 'ada@example.com',
    apiKey: '[redacted]',
    note: 'uses [redacted]',
  });
  expect(String(ok?.attributes['steward.step.output'])).toHaveLength(2_000);
  expect(failed?.status.message).toBe('refused [redacted]');
  expect(collector.bodies.join('')).not.toContain(SECRET);
});

it("starts a run's span at its end when the run is not found, and links a delegated run to its parent's", async () => {
  collector = await startOtlpCollector();
  const lost = tracing(collector.url, { instanceId: 'p', facts: null });
  lost.runEnded({ runId: 'gone', status: 'failed', at: at(3) });
  await lost.close();
  const child = tracing(collector.url, {
    instanceId: 'p',
    facts: { createdAt: created, parentRunId: 'run-1', assistant: 'Ada' },
  });
  child.runEnded({ runId: 'run-2', status: 'completed', at: at(4) });
  child.runEnded({ runId: 'run-1', status: 'completed', at: at(5) });
  await child.close();
  const [gone, run2, run1] = collector.spans;
  expect(gone?.startNs).toBe(gone?.endNs);
  expect(gone?.status.code).toBe(2);
  expect(run2?.attributes).toMatchObject({ 'steward.run.parent_id': 'run-1', 'steward.run.assistant': 'Ada' });
  expect(run2?.links).toEqual([{ traceId: run1?.traceId, spanId: run1?.spanId }]);
  expect(run2?.traceId).not.toBe(run1?.traceId);
});

it('says in the log when the collector cannot be reached, and closing still returns', async () => {
  collector = await startOtlpCollector();
  const url = collector.url;
  await collector.close();
  collector = undefined;
  const logged: string[] = [];
  const t = tracing(url, { instanceId: 'p', log: (m) => logged.push(m) });
  t.stepAttemptEnded(attempt({}));
  await t.close();
  expect(logged.length).toBeGreaterThan(0);
  expect(logged.every((m) => m.startsWith('tracing: '))).toBe(true);
  expect(logged.join('\n')).toMatch(/not all sent within 5 s|export/);
});

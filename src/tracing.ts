/**
 * Steward's OpenTelemetry traces, exported over OTLP/HTTP (JSON) when an OTLP endpoint is set: the only file that
 * imports the OpenTelemetry SDK, loaded only then (src/app.ts imports it dynamically), so with traces off nothing of
 * it is loaded and no provider exists. The engine tells of its work through the `RunTelemetry` port.
 *
 * Runs outlive processes (a restart, a deploy's hand-over), so no span is held open across one. A run is one trace
 * whose id is derived from the run id (so every process that worked on it writes into the same trace), with one root
 * span, `steward.run`, whose span id is derived from the run id too: it is written when the run ends (its report
 * stored, or an end that owes none), by whichever process ends it, and spans from the run's creation to that end.
 * Each model call (`chat <model>`) and step attempt (`execute_tool <tool>`) is that root's child, written as it
 * ends by the process that made it; `service.instance.id` says which process that was. Until the run ends its
 * children are shown under a root not yet received.
 *
 * Spans carry ids, names, counts, outcomes and error codes; step arguments and outputs only with
 * `STEWARD_OTEL_CONTENT=on`, cut short and with secrets masked. Model prompts and answers never.
 */
import { createHash } from 'node:crypto';
import {
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Link,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  RandomIdGenerator,
  type IdGenerator,
} from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from './config.ts';
import type {
  ModelCallTelemetry,
  RunEndTelemetry,
  RunTelemetry,
  StepAttemptTelemetry,
} from './engine/run-telemetry.ts';
import type { Json } from './engine/types.ts';
import { redact } from './logger.ts';

/** The most characters of a step's arguments or output kept on a span (content opted in). */
const CONTENT_CHARS = 2_000;
/** How long closing may wait for the last spans to reach the collector: a deploy's stop is not held longer. */
const FLUSH_MS = 5_000;
/** Argument and output keys whose values are masked whatever they hold (content opted in). */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authori[sz]ation|cookie|credential|private[-_]?key/i;

/** What the run's span says besides its id and status, read from the store when it ends. */
export interface RunFacts {
  createdAt: Date;
  route?: string | null;
  assistant?: string | null;
  parentRunId?: string | null;
}

export interface TracingOptions extends TracingConfig {
  /** The run's creation time and facts, for its span; null when it is not found (the span then starts at its end). */
  describeRun: (runId: string) => Promise<RunFacts | null>;
  /** Values that must never be written (keys, tokens): masked in content and error messages. */
  secrets: readonly string[];
  /** This process, as `service.instance.id` (the run store's lease owner id). */
  instanceId: string;
  serviceVersion?: string;
  log: (level: 'warn', message: string) => void;
}

/** The trace and root span ids of a run: the same in every process, so all of a run's spans form one trace. */
export function runSpanContext(runId: string): SpanContext {
  const hex = createHash('sha256').update(`steward-run:${runId}`).digest('hex');
  return { traceId: hex.slice(0, 32), spanId: hex.slice(32, 48), traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

/** Random ids, except for the one span started under `withIds` (a run's root, whose ids come from its run id). */
class RunIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private next: SpanContext | undefined;

  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.next?.spanId ?? this.random.generateSpanId();
  }

  /** Runs `start` (a synchronous `startSpan`) with the ids given. */
  withIds<T>(ids: SpanContext, start: () => T): T {
    this.next = ids;
    try {
      return start();
    } finally {
      this.next = undefined;
    }
  }
}

/** The `RunTelemetry` port as OpenTelemetry spans. */
export class OtelTracing implements RunTelemetry {
  private readonly provider: NodeTracerProvider;
  private readonly tracer: Tracer;
  private readonly ids = new RunIdGenerator();
  /** Run spans waiting for their run's facts; closing waits for them. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: TracingOptions) {
    // The exporter reads the other OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression) itself.
    const exporter = new OTLPTraceExporter({ url: options.url });
    const resource = defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(
        resourceFromAttributes({
          'service.name': options.serviceName,
          'service.instance.id': options.instanceId,
          ...(options.serviceVersion && { 'service.version': options.serviceVersion }),
        }),
      );
    this.provider = new NodeTracerProvider({
      resource,
      idGenerator: this.ids,
      // Every run is kept whole: a model call or step is never kept without its run, nor the other way round.
      sampler: new AlwaysOnSampler(),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    // Not registered globally: nothing else in the process traces through the API, and tests run several Stewards.
    this.tracer = this.provider.getTracer('steward');
    // The SDK reports a failed export (a collector down or refusing) through its diagnostics: into the log.
    const warn = (message: string) => options.log('warn', `tracing: ${redact(message, options.secrets)}`);
    const quiet = () => undefined;
    diag.setLogger(
      { error: warn, warn, info: quiet, debug: quiet, verbose: quiet },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  }

  modelCalled(c: ModelCallTelemetry): void {
    this.safely('a model call', () => {
      const span = this.tracer.startSpan(
        `chat ${c.model}`,
        {
          kind: SpanKind.CLIENT,
          startTime: c.startedAt,
          attributes: {
            'steward.run.id': c.runId,
            'steward.model.role': c.role,
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': c.model,
            'gen_ai.usage.input_tokens': c.inputTokens,
            'gen_ai.usage.output_tokens': c.outputTokens,
          },
        },
        this.underRun(c.runId),
      );
      if (c.error !== undefined) {
        span.setAttribute('error.type', 'llm_failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: this.cut(redact(c.error, this.options.secrets)) });
      }
      span.end(c.endedAt);
    });
  }

  stepAttemptEnded(a: StepAttemptTelemetry): void {
    this.safely('a step attempt', () => {
      const dot = a.tool.indexOf('.');
      const attributes: Attributes = {
        'steward.run.id': a.runId,
        'steward.step.id': a.stepId,
        'steward.step.attempt': a.attempt,
        'steward.step.tool': a.tool,
        'steward.step.outcome': a.outcome,
        'steward.step.duration_ms': a.endedAt.getTime() - a.startedAt.getTime(),
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': a.tool,
        ...(dot > 0 && { 'steward.step.server': a.tool.slice(0, dot) }),
      };
      if (this.options.content) {
        attributes['steward.step.args'] = this.content(a.args);
        if (a.output !== null) attributes['steward.step.output'] = this.content(a.output);
      }
      const span = this.tracer.startSpan(
        `execute_tool ${a.tool}`,
        { kind: SpanKind.CLIENT, startTime: a.startedAt, attributes },
        this.underRun(a.runId),
      );
      if (a.outcome !== 'ok') {
        span.setAttribute('error.type', a.outcome);
        // A failure's message may quote the tool's output (a `tool_error` is its output): only with content.
        const message =
          this.options.content && a.error !== undefined ? this.cut(redact(a.error, this.options.secrets)) : a.outcome;
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      }
      span.end(a.endedAt);
    });
  }

  runEnded(end: RunEndTelemetry): void {
    const written = this.options
      .describeRun(end.runId)
      .catch((err: unknown) => {
        this.options.log('warn', `tracing: run ${end.runId} not read for its span: ${(err as Error).message}`);
        return null;
      })
      .then((facts) => this.safely('a run', () => this.writeRun(end, facts)))
      .finally(() => this.pending.delete(written));
    this.pending.add(written);
  }

  /** Writes what is pending, then lets the exporter go; gives up after `FLUSH_MS` (the spans left are lost). */
  async close(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.options.log('warn', `tracing: the last spans were not all sent within ${FLUSH_MS / 1000} s`);
        resolve();
      }, FLUSH_MS);
    });
    const flushed = Promise.allSettled([...this.pending]).then(() => this.provider.shutdown());
    try {
      await Promise.race([flushed, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private writeRun(end: RunEndTelemetry, facts: RunFacts | null): void {
    const ids = runSpanContext(end.runId);
    const links: Link[] = facts?.parentRunId
      ? [{ context: runSpanContext(facts.parentRunId), attributes: { 'steward.link': 'delegated_by' } }]
      : [];
    const attributes: Attributes = {
      'steward.run.id': end.runId,
      'steward.run.status': end.status,
      ...(facts?.route && { 'steward.run.route': facts.route }),
      ...(facts?.assistant && { 'steward.run.assistant': facts.assistant }),
      ...(facts?.parentRunId && { 'steward.run.parent_id': facts.parentRunId }),
    };
    const startTime = facts?.createdAt ?? end.at;
    const span = this.ids.withIds(ids, () =>
      this.tracer.startSpan('steward.run', { root: true, startTime, attributes, links }, ROOT_CONTEXT),
    );
    if (end.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: 'the run failed' });
    span.end(end.at);
  }

  /** The context of a run's child span: its run's root, wherever and whenever that is written. */
  private underRun(runId: string): Context {
    return trace.setSpanContext(ROOT_CONTEXT, runSpanContext(runId));
  }

  /** Content opted in: JSON, values under secret-looking keys masked, known secrets masked, cut short. */
  private content(value: Json): string {
    const json = JSON.stringify(value, (k, v: unknown) => (k !== '' && SECRET_KEY.test(k) ? '[redacted]' : v));
    return this.cut(redact(json, this.options.secrets));
  }

  private cut(text: string): string {
    return text.length <= CONTENT_CHARS ? text : `${text.slice(0, CONTENT_CHARS - 1)}…`;
  }

  /** Telemetry never breaks a run: a failure to make a span is logged. */
  private safely(what: string, write: () => void): void {
    try {
      write();
    } catch (err) {
      this.options.log('warn', `tracing: ${what} not traced: ${(err as Error).message}`);
    }
  }
}

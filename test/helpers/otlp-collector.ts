/**
 * An OpenTelemetry collector stand-in: a local HTTP server taking OTLP/HTTP trace exports in JSON, as strict as the
 * spec (https://opentelemetry.io/docs/specs/otlp/#otlphttp): only `POST /v1/traces` (else 404), only
 * `application/json` bodies here (else 415; Steward's exporter sends JSON), answered 200 with an
 * `ExportTraceServiceResponse` in JSON. Trace and span ids must be hex strings (32 and 16 digits), not base64
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): a body breaking that is answered 400.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as received, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  /** The resource's attributes of the export it came in. */
  resource: Record<string, string | number | boolean>;
}

export interface OtlpCollector {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received (to look for what must not be there). */
  bodies: string[];
  /** Requests refused, with why. */
  refused: string[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;

const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const refuse = (status: number, why: string) => {
        refused.push(`${req.method} ${req.url}: ${why}`);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message: why }));
      };
      if (req.method !== 'POST' || req.url !== '/v1/traces') return refuse(404, 'not an OTLP traces path');
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? ''))
        return refuse(415, `unsupported content type ${req.headers['content-type']}`);
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      try {
        spans.push(...parseExport(body));
      } catch (err) {
        return refuse(400, (err as Error).message);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function parseExport(body: string): ReceivedSpan[] {
  const data = JSON.parse(body) as {
    resourceSpans?: {
      resource?: { attributes?: OtlpAttributes };
      scopeSpans?: {
        spans?: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          startTimeUnixNano: string | number;
          endTimeUnixNano: string | number;
          attributes?: OtlpAttributes;
          links?: { traceId: string; spanId: string }[];
          status?: { code?: number; message?: string };
        }[];
      }[];
    }[];
  };
  const out: ReceivedSpan[] = [];
  for (const rs of data.resourceSpans ?? []) {
    const resource = flatten(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) {
        const ids = [s.traceId, ...(s.links ?? []).map((l) => l.traceId)];
        const spanIds = [
          s.spanId,
          ...(s.parentSpanId ? [s.parentSpanId] : []),
          ...(s.links ?? []).map((l) => l.spanId),
        ];
        if (!ids.every((id) => HEX_TRACE.test(id))) throw new Error(`trace id not 32 hex digits: ${ids.join(', ')}`);
        if (!spanIds.every((id) => HEX_SPAN.test(id)))
          throw new Error(`span id not 16 hex digits: ${spanIds.join(', ')}`);
        if (typeof s.kind !== 'number') throw new Error('kind must be an enum integer');
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: flatten(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          status: s.status ?? {},
          resource,
        });
      }
  }
  return out;
}

function flatten(attributes: OtlpAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

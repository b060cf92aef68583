/**
 * Translates database failures into `StewardError`s at the store's edge, so neither the engine nor a person
 * ever sees a pg error, a connection string or a password.
 */
import { StewardError } from '../engine/errors.ts';

/** A PostgreSQL server as messages may name it: host and port, plus the secrets to scrub from any text. */
export interface DatabaseTarget {
  host: string;
  port: number;
  secrets: string[];
}

// Node socket errors that mean "no server there (now)"; trying again later may help.
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

// SQLSTATEs worth a retry: connection exceptions (class 08), shutdowns, too many connections, lost races.
const RETRYABLE_STATES = /^(08...|57P0[123]|53300|40001|40P01)$/;
// The server answered but will not let us in: a configuration problem, not an outage.
const REFUSED_STATES = new Set(['28000', '28P01', '3D000', '42501']);

/** Reads a `postgres://` URL into a target, without keeping the URL itself. Throws `config` when unparsable. */
export function describeTarget(databaseUrl: string): DatabaseTarget {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    // No cause: Node's URL error carries the input, password included.
    throw new StewardError('config', 'DATABASE_URL is not a valid postgres:// URL');
  }
  const password = decodeURIComponent(url.password);
  return {
    // `?host=/run/postgresql` selects a Unix socket; pg honours it over the authority part.
    host: url.searchParams.get('host') ?? (url.hostname || 'localhost'),
    port: Number(url.port || 5432),
    secrets: [databaseUrl, url.password, password].filter((s) => s.length > 0),
  };
}

/** Turns any failure of `action` into a `store_failed` (or `config`) StewardError whose message names no secret. */
export function toStoreError(error: unknown, action: string, target?: DatabaseTarget): StewardError {
  if (error instanceof StewardError) return error;
  const code = errorCode(error);
  const where = target ? ` at ${target.host}:${target.port}` : '';
  let message: string;
  let kind: 'store_failed' | 'config' = 'store_failed';
  let retryable = false;
  if (code !== undefined && UNREACHABLE.has(code)) {
    message = `cannot reach PostgreSQL${where}: ${code}`;
    retryable = true;
  } else if (isConnectionTimeout(error)) {
    message = `cannot reach PostgreSQL${where}: connection timed out`;
    retryable = true;
  } else if (isConnectionLost(error)) {
    message = `lost the connection to PostgreSQL${where} during ${action}`;
    retryable = true;
  } else if (code !== undefined && REFUSED_STATES.has(code)) {
    message = `PostgreSQL${where} refused access: ${errorMessage(error)}`;
    kind = 'config';
  } else {
    message = `${action} failed: ${errorMessage(error)}${code ? ` (${code})` : ''}`;
    retryable = code !== undefined && RETRYABLE_STATES.test(code);
  }
  return new StewardError(kind, scrub(message, target?.secrets ?? []), { retryable, cause: error });
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Node reports a host with several addresses (localhost: ::1 and 127.0.0.1) as an AggregateError.
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  return String(error);
}

function isConnectionTimeout(error: unknown): boolean {
  return error instanceof Error && /connection timeout|timeout expired/i.test(error.message);
}

// pg reports a server that went away mid-query (restart, failover, a killed backend) without an error code.
function isConnectionLost(error: unknown): boolean {
  return (
    error instanceof Error &&
    /connection terminated|encountered a connection error and is not queryable|server closed the connection/i.test(
      error.message,
    )
  );
}

function scrub(text: string, secrets: string[]): string {
  return secrets.reduce((out, secret) => out.split(secret).join('***'), text);
}

/** Runs one store operation, translating whatever it throws. */
export async function withStoreErrors<T>(action: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toStoreError(error, action);
  }
}

/**
 * Turns a failed model call into Steward's one error class, with a sentence a person can act on.
 * Each adapter first reduces its SDK's error to an `LlmFailure`, so no SDK type reaches this file or the engine.
 */
import { StewardError } from '../engine/errors.ts';

/** What went wrong with a model call, free of SDK types. */
export type LlmFailure =
  | { kind: 'status'; status: number; detail?: string }
  | { kind: 'connection'; code?: string }
  | { kind: 'timeout' }
  | { kind: 'cancelled' }
  | { kind: 'empty'; reason?: string }
  | { kind: 'refused'; detail?: string }
  | { kind: 'malformed' }
  /** A streamed answer that stopped before its end: the connection dropped, or the server sent an error event. */
  | { kind: 'cut'; detail?: string }
  | { kind: 'unknown'; detail?: string };

/** Who was called; the key is here only so that it can be scrubbed from every message. */
export interface LlmCallContext {
  provider: string;
  baseURL: string;
  model: string;
  apiKey: string;
  timeoutMs: number;
}

const CONNECTION_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** Builds the `llm_failed` error for a failure, never quoting the API key. */
export function llmFailed(failure: LlmFailure, ctx: LlmCallContext, cause?: unknown): StewardError {
  const host = hostOf(ctx.baseURL);
  const where = `${ctx.provider} at ${host}`;
  const detail = (text?: string) => (text ? `: ${truncate(redact(text, ctx.apiKey), 300)}` : '');
  const fail = (message: string, retryable: boolean) =>
    new StewardError('llm_failed', capitalize(message), { retryable, cause: scrubCause(cause, ctx.apiKey) });

  switch (failure.kind) {
    case 'status':
      return statusFailure(failure.status, where, ctx.model, detail(failure.detail), fail);
    case 'connection': {
      const why = (failure.code && CONNECTION_CODES[failure.code]) ?? failure.code ?? 'network error';
      return fail(`Could not reach ${where} (${why}).`, true);
    }
    case 'timeout':
      return fail(`Model ${ctx.model} at ${host} timed out: it did not answer within ${seconds(ctx.timeoutMs)}.`, true);
    case 'cancelled':
      return fail(`The call to model ${ctx.model} was cancelled.`, false);
    case 'empty':
      // An empty answer is often a one-off (all tokens spent on reasoning, a hiccup): worth another try.
      return fail(`Model ${ctx.model} returned an empty answer${reason(failure.reason)}.`, true);
    case 'refused':
      return fail(`Model ${ctx.model} declined to answer${detail(failure.detail)}.`, false);
    case 'malformed':
      return fail(`${where} sent something that is not a model answer; check that the base URL is the API's.`, false);
    case 'cut':
      // Like a dropped connection: the next try may well get the whole answer.
      return fail(
        `Model ${ctx.model} at ${host} stopped sending before its answer ended${detail(failure.detail)}.`,
        true,
      );
    case 'unknown':
      return fail(`The call to model ${ctx.model} at ${host} failed${detail(failure.detail)}.`, false);
  }
}

function statusFailure(
  status: number,
  where: string,
  model: string,
  detail: string,
  fail: (message: string, retryable: boolean) => StewardError,
): StewardError {
  // The server's text is left out of a 401 on purpose: providers echo part of the refused key there.
  if (status === 401) return fail(`${where} refused the API key (HTTP 401).`, false);
  if (status === 403) return fail(`${where} denied access to model ${model} (HTTP 403)${detail}.`, false);
  if (status === 404) return fail(`${where} has no model ${model} or no such endpoint (HTTP 404)${detail}.`, false);
  if (status === 429) return fail(`${where} is rate-limiting requests (HTTP 429)${detail}.`, true);
  if (status === 408 || status === 409 || status >= 500) {
    return fail(`${where} failed (HTTP ${status})${detail}.`, true);
  }
  return fail(`${where} rejected the request for model ${model} (HTTP ${status})${detail}.`, false);
}

/** The first `code` string found along an error's cause chain (Node puts ECONNREFUSED a few causes deep). */
export function findErrorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.length > 0) e = inner[0];
    else e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The provider's own error message from a parsed error body, whichever of the two common shapes it has. */
export function serverMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const direct = (body as { message?: unknown }).message;
  if (typeof direct === 'string') return direct;
  return serverMessage((body as { error?: unknown }).error);
}

/** Host (and port) of a base URL, for messages; credentials in the URL are dropped. */
export function hostOf(baseURL: string): string {
  try {
    return new URL(baseURL).host;
  } catch {
    return baseURL;
  }
}

function redact(text: string, apiKey: string): string {
  return apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
}

function reason(stopReason?: string): string {
  return stopReason ? ` (stop reason: ${stopReason})` : '';
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

// Keeps the SDK error as the cause for debugging, unless its text carries the key (a server echoing it back).
function scrubCause(cause: unknown, apiKey: string): unknown {
  if (!(cause instanceof Error) || apiKey.length < 4) return cause;
  const body = (cause as { error?: unknown }).error;
  const text = `${cause.message} ${safeJson(body)}`;
  return text.includes(apiKey) ? new Error(redact(cause.message, apiKey)) : cause;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

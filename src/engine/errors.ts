import type { ErrorCode, StepError } from './types.ts';

/** The one error class Steward throws: a closed code, a sentence for people, and whether retrying may help. */
export class StewardError extends Error {
  readonly code: ErrorCode | 'config' | 'limit_reached' | 'store_failed' | 'fenced';
  readonly retryable: boolean;

  constructor(code: StewardError['code'], message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'StewardError';
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** Builds a step error value (expected failures are values, not exceptions). */
export function stepError(code: ErrorCode, message: string, retryable = false): StepError {
  return { code, message, retryable };
}

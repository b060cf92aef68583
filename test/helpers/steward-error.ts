import { expect } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';

/** The StewardError `promise` rejects with; the test fails if it resolves or rejects with anything else. */
export async function stewardError(promise: Promise<unknown>): Promise<StewardError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StewardError);
  return err as StewardError;
}

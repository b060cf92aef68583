import { describe, expect, it } from 'vitest';
import type { StoredStepAttempt } from '../../../src/engine/ports.ts';
import { latestAttempts } from '../../../src/engine/run/attempts.ts';
import { createAttempt, createStepError } from '../fixtures.ts';

const a1 = createAttempt('a', { attempt: 1, status: 'failed', error: createStepError() });
const a2 = createAttempt('a', { attempt: 2, status: 'failed', error: createStepError() });
const a3 = createAttempt('a', { attempt: 3, status: 'succeeded', output: { text: 'third' } });
const b1 = createAttempt('b', { attempt: 1, status: 'running', endedAt: null });

describe('the latest attempt of each step', () => {
  it.each<[string, StoredStepAttempt[], Record<string, StoredStepAttempt>]>([
    ['no attempts', [], {}],
    ['one attempt', [a1], { a: a1 }],
    ['retries in order', [a1, a2, a3], { a: a3 }],
    ['retries out of order', [a3, a1, a2], { a: a3 }],
    ['several steps', [a1, b1, a2], { a: a2, b: b1 }],
  ])('%s', (_, attempts, expected) => {
    expect(Object.fromEntries(latestAttempts(attempts))).toEqual(expected);
  });

  it('the later record wins when two have the same attempt number', () => {
    const again = createAttempt('a', { attempt: 1, status: 'succeeded' });
    expect(latestAttempts([a1, again]).get('a')).toBe(again);
  });
});

import { describe, expect, it } from 'vitest';
import type { DecisionAction } from '../../src/engine/types.ts';
import { attemptWaits, RELEASE_GRACE_MS, type WaitAttempt, type WaitDecision } from '../../src/web/timeline-waits.ts';

/** A plan of two steps: `summary` waits for `list`. */
const STEPS = [
  { id: 'list', dependsOn: [] },
  { id: 'summary', dependsOn: ['list'] },
];

const createAttempt = (overrides: Partial<WaitAttempt> = {}): WaitAttempt => ({
  stepId: 'list',
  attempt: 1,
  revision: 1,
  start: 0,
  end: 1_000,
  ...overrides,
});

const decide = (
  action: DecisionAction,
  at: number,
  who = 'Ada',
  overrides: Partial<WaitDecision> = {},
): WaitDecision => ({
  revision: 1,
  action,
  accepted: true,
  createdAt: new Date(at),
  actor: { id: `U0${who.toUpperCase()}`, name: who, channel: 'slack' },
  ...overrides,
});

/** The waits of `list` (0 to 1 s) and of `summary` starting at `start`, under these decisions. */
const summaryWaits = (start: number, decisions: WaitDecision[]) =>
  attemptWaits([createAttempt(), createAttempt({ stepId: 'summary', start, end: start + 500 })], STEPS, decisions)[1];

describe('attemptWaits', () => {
  it('counts a wait with no decision in it as queued', () => {
    expect(summaryWaits(3_000, [])).toEqual([{ kind: 'queued', from: 1_000, to: 3_000 }]);
  });

  it('splits a wait paused by one person and resumed by another into queued and held, naming who resumed', () => {
    expect(summaryWaits(43_000, [decide('pause', 3_000, 'Bob'), decide('resume', 43_000)])).toEqual([
      { kind: 'queued', from: 1_000, to: 3_000 },
      { kind: 'held', from: 3_000, to: 43_000, note: 'until Ada resumed' },
    ]);
  });

  it('holds from the start of the wait when the run was paused while the step waited for its dependencies', () => {
    expect(summaryWaits(9_000, [decide('pause', 500, 'Bob'), decide('resume', 9_000)])).toEqual([
      { kind: 'held', from: 1_000, to: 9_000, note: 'until Ada resumed' },
    ]);
  });

  it('holds a step at a breakpoint (no pause decision) until someone continues', () => {
    expect(summaryWaits(41_000, [decide('resume', 41_000)])).toEqual([
      { kind: 'held', from: 1_000, to: 41_000, note: 'until Ada continued' },
    ]);
  });

  it('counts a release stored just after the start it allowed (people are told before it is stored)', () => {
    expect(summaryWaits(41_000, [decide('resume', 41_300)])).toEqual([
      { kind: 'held', from: 1_000, to: 41_000, note: 'until Ada continued' },
    ]);
    expect(summaryWaits(41_000, [decide('resume', 41_000 + RELEASE_GRACE_MS + 1)])).toEqual([
      { kind: 'queued', from: 1_000, to: 41_000 },
    ]);
  });

  it('holds steps waiting for approval until someone approves them', () => {
    expect(summaryWaits(20_000, [decide('approve', 20_050, 'Dan')])).toEqual([
      { kind: 'held', from: 1_000, to: 20_000, note: 'until Dan approved' },
    ]);
  });

  it('ignores refused decisions', () => {
    const refused = { accepted: false };
    expect(
      summaryWaits(43_000, [decide('pause', 3_000, 'Bob', refused), decide('resume', 43_000, 'Eve', refused)]),
    ).toEqual([{ kind: 'queued', from: 1_000, to: 43_000 }]);
  });

  it('ignores decisions outside the wait, and a pause after the start', () => {
    const before = [decide('pause', 200, 'Bob'), decide('resume', 800)];
    const after = [decide('pause', 5_500, 'Bob'), decide('resume', 6_000)];
    expect(summaryWaits(5_000, [...before, ...after])).toEqual([{ kind: 'queued', from: 1_000, to: 5_000 }]);
  });

  it('counts the wait before a retry as backing off', () => {
    const waits = attemptWaits(
      [createAttempt({ end: 1_000 }), createAttempt({ attempt: 2, start: 3_000, end: 4_000 })],
      STEPS,
      [],
    );
    expect(waits).toEqual([[], [{ kind: 'backoff', from: 1_000, to: 3_000 }]]);
  });

  it('splits a retry paused while it backed off into backing off, held, and backing off after the resume', () => {
    const [, retry] = attemptWaits([createAttempt(), createAttempt({ attempt: 2, start: 5_000, end: 6_000 })], STEPS, [
      decide('pause', 1_500, 'Bob'),
      decide('resume', 4_000),
    ]);
    expect(retry).toEqual([
      { kind: 'backoff', from: 1_000, to: 1_500 },
      { kind: 'held', from: 1_500, to: 4_000, note: 'until Ada resumed' },
      { kind: 'backoff', from: 4_000, to: 5_000 },
    ]);
  });

  it('gives a release to one try of a step only: a try that failed at once does not make its retry held', () => {
    const waits = attemptWaits(
      [
        createAttempt({ stepId: 'summary', attempt: 2, start: 12_000, end: 13_000 }),
        createAttempt(),
        createAttempt({ stepId: 'summary', start: 10_000, end: 10_050 }),
      ],
      STEPS,
      [decide('resume', 10_100)],
    );
    expect(waits).toEqual([
      [{ kind: 'backoff', from: 10_050, to: 12_000 }],
      [],
      [{ kind: 'held', from: 1_000, to: 10_000, note: 'until Ada continued' }],
    ]);
  });

  it('makes a first step ready at its plan approval, so its hold at a breakpoint shows', () => {
    const first = (start: number, decisions: WaitDecision[], revision = 1) =>
      attemptWaits([createAttempt({ start, end: start + 1_000, revision })], STEPS, decisions)[0];
    // Approved, then held before the step until Ada continued.
    expect(first(30_000, [decide('approve', 100, 'Dan'), decide('resume', 30_000)])).toEqual([
      { kind: 'held', from: 100, to: 30_000, note: 'until Ada continued' },
    ]);
    // The approval is stored just after the step it let go started: nothing waited.
    expect(first(1_000, [decide('approve', 1_200, 'Dan')])).toEqual([]);
    // A step of a later revision is ready at that revision's approval, not an earlier one's.
    const revised = [decide('approve', 100, 'Dan'), decide('approve', 50_100, 'Dan', { revision: 2 })];
    expect(first(50_000, revised, 2)).toEqual([]);
    // No approval (the run started on its own): no wait is drawn.
    expect(first(1_000, [])).toEqual([]);
  });

  it("lets an approval release only its own revision's steps", () => {
    // A retry backing off while an unrelated revision 2 is approved, just after the retry started: still backing off.
    const [, retry] = attemptWaits([createAttempt(), createAttempt({ attempt: 2, start: 3_000, end: 4_000 })], STEPS, [
      decide('approve', 100, 'Dan'),
      decide('approve', 3_500, 'Dan', { revision: 2 }),
    ]);
    expect(retry).toEqual([{ kind: 'backoff', from: 1_000, to: 3_000 }]);
    // A first step added by an edit that needed no review (revision 2, never approved): no wait from revision 1's.
    const [added] = attemptWaits([createAttempt({ start: 600_000, end: 600_100, revision: 2 })], STEPS, [
      decide('approve', 100, 'Dan'),
    ]);
    expect(added).toEqual([]);
  });

  it('draws no wait when the readiness is after the start (clocks of two processes)', () => {
    expect(summaryWaits(900, [])).toEqual([]);
  });
});

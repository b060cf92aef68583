/** The words of the brakes: one clear sentence per trip, and the escalation a parent gets when rounds run out. */
import { describe, expect, it } from 'vitest';
import { brakeSentence, escalationText } from '../../../src/engine/assistant/brake-text.ts';
import { depthLimit, type DelegationRound } from '../../../src/engine/assistant/delegations.ts';

function round(n: number, overrides: Partial<DelegationRound> = {}): DelegationRound {
  return {
    round: n,
    delegationId: `del_${n}`,
    childRunId: `run_${n}`,
    instruction: `Round ${n}: find why the nightly export failed.`,
    reply: `Reply ${n}: the export job timed out.`,
    createdAt: new Date(Date.UTC(2026, 11, 3, 9, n)),
    endedAt: new Date(Date.UTC(2026, 11, 3, 9, n + 1)),
    ...overrides,
  };
}

describe('escalationText', () => {
  it('says how many rounds there were, gives each instruction and reply in order, and tells the parent to take over', () => {
    const text = escalationText('ops', [round(1), round(2), round(3)], 3);
    expect(text).toBe(
      [
        'ops was asked 3 times in this conversation, and 3 is the most: it will not be called again here.',
        '',
        'Round 1',
        'Instruction: Round 1: find why the nightly export failed.',
        'Reply: Reply 1: the export job timed out.',
        '',
        'Round 2',
        'Instruction: Round 2: find why the nightly export failed.',
        'Reply: Reply 2: the export job timed out.',
        '',
        'Round 3',
        'Instruction: Round 3: find why the nightly export failed.',
        'Reply: Reply 3: the export job timed out.',
        '',
        'Take over now: finish the task yourself from what is above, or tell the person plainly what is missing. ' +
          'Do not delegate to ops again.',
      ].join('\n'),
    );
  });

  it('cuts a long instruction or reply to the budget with a note, and names a round that never replied', () => {
    const long = 'x'.repeat(5_000);
    const text = escalationText('ops', [round(1, { instruction: long, reply: null })], 1, 100);
    expect(text).toContain(`Instruction: ${'x'.repeat(100)}… [4900 more characters not shown]`);
    expect(text).toContain('Reply: (none: it did not finish)');
    expect(text).toContain('ops was asked 1 time in this conversation');
    expect(text.length).toBeLessThan(600);
  });
});

describe('brakeSentence', () => {
  it.each([
    [
      { ok: false, brake: 'depth', limit: 2, count: 3 } as const,
      "Delegation refused: ops would run 3 levels deep, and this chain may go 2 levels deep (the operator's setting, or less where a plan asked for less; never more than 5). Do this part without delegating it.",
    ],
    [
      { ok: false, brake: 'concurrency', limit: 10, count: 10 } as const,
      'Delegation refused: this person already has 10 delegated runs going, and 10 at once is the most. Wait until one ends, or stop one.',
    ],
    [
      { ok: false, brake: 'rounds', limit: 3, count: 3 } as const,
      'Delegation refused: this conversation has asked ops 3 times, and 3 is the most; ops will not be called again here.',
    ],
    [
      { ok: false, brake: 'messages', limit: 5, count: 5 } as const,
      'Message refused: a delegated run and its parent have exchanged 5 messages, and 5 is the most. Finish with what you have.',
    ],
  ])('says what tripped and what to do: %o', (trip, sentence) => {
    expect(brakeSentence(trip, 'ops')).toBe(sentence);
  });

  it('speaks of "the Assistant" when none is named, and of one level in the singular', () => {
    expect(brakeSentence({ ok: false, brake: 'depth', limit: 1, count: 2 })).toMatch(
      /^Delegation refused: the Assistant would run 2 levels deep, and this chain may go 1 level deep/,
    );
  });
});

describe('depthLimit', () => {
  it('is the configured depth, or a lower one asked for; never above the setting, the ceiling (5) nor the parent chain’s limit', () => {
    // A plan asking for more than the setting gets the setting: text in a plan cannot loosen the brake.
    expect(depthLimit(7, 2, null)).toBe(2);
    expect(depthLimit(5, 1, null)).toBe(1);
    expect(depthLimit(1, 2, null)).toBe(1);
    expect(depthLimit(undefined, 2, null)).toBe(2);
    expect(depthLimit(undefined, 9, null)).toBe(5);
    expect(depthLimit(7, 9, 3)).toBe(3);
    expect(depthLimit(-1, 2, null)).toBe(0);
  });
});

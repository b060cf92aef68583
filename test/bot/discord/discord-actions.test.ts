/** Custom ids carry the card's run and revision, round-trip, fit in 100 characters; foreign ids are ignored. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONTROL_KINDS,
  customId,
  DECISION_KINDS,
  decisionOf,
  MODAL_KINDS,
  parseCustomId,
} from '../../../src/bot/discord/discord-actions.ts';

const KINDS = [...DECISION_KINDS, ...CONTROL_KINDS, ...MODAL_KINDS];

describe('custom ids', () => {
  it('round-trip every kind for any UUID run and revision, within 100 characters', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KINDS),
        fc.uuid(),
        fc.integer({ min: 0, max: 999_999_999 }),
        (kind, runId, revision) => {
          const id = customId(kind, { runId, revision });
          expect(id.length).toBeLessThanOrEqual(100);
          expect(parseCustomId(id)).toEqual({ kind, runId, revision });
        },
      ),
    );
  });

  it('parse anything that is not ours to null, without throwing', () => {
    const run = '6f1c1a52-93a4-4e5e-9b53-0d6f0e0c0a01';
    for (const id of [
      '',
      'stw',
      `stw:approve:${run}`,
      `stw:approve:${run}:1:extra`,
      `stw:delete:${run}:1`,
      `xyz:approve:${run}:1`,
      `stw:approve:${run}:-1`,
      `stw:approve:${run}:01`,
      `stw:approve:${run}:1.5`,
      `stw:approve::1`,
      `stw:approve:${run}:${'9'.repeat(20)}`,
      'steward.approve',
      `stw:approve:${'a'.repeat(95)}:1`,
    ])
      expect(parseCustomId(id)).toBeNull();
    expect(parseCustomId(undefined)).toBeNull();
    expect(parseCustomId(42)).toBeNull();
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => void parseCustomId(s)));
  });

  it('name the decision of a decision button and nothing for controls or modals', () => {
    expect(decisionOf('approve')).toBe('approve');
    expect(decisionOf('stop')).toBe('stop');
    expect(decisionOf('edit')).toBeNull();
    expect(decisionOf('amend-modal')).toBeNull();
  });

  it('refuse to build an id from a run id that would make it ambiguous', () => {
    expect(() => customId('approve', { runId: 'a:b', revision: 1 })).toThrow(RangeError);
    expect(() => customId('approve', { runId: 'a', revision: -1 })).toThrow(RangeError);
  });
});

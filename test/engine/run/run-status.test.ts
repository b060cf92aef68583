import { describe, expect, it } from 'vitest';
import { plainText } from '../../../src/engine/run/run-actions.ts';
import { describeHistory } from '../../../src/engine/run/run-status.ts';
import type { StoredRun } from '../../../src/engine/ports.ts';
import { createPlan } from '../fixtures.ts';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const ada = { id: 'U0ADA', channel: 'slack' };
const run: StoredRun = {
  id: 'r1',
  status: 'running',
  conversation: { channel: 'slack', key: 'C1:1.0' },
  requester: ada,
  request: 'say hi',
  revision: 1,
  amendmentRounds: 1,
  plan: null,
  approvedRisk: 'low',
  breakpoints: [],
  createdAt: at(0),
};

describe('a run history', () => {
  it('keeps each person who decided as a person, so Slack can show a mention, in time order', () => {
    const said = describeHistory(
      run,
      [
        { revision: 0, plan: createPlan([]), reason: 'planned', createdAt: at(1) },
        { revision: 1, plan: createPlan([]), reason: 'amendment 1', createdAt: at(3) },
      ],
      [{ revision: 0, actor: ada, action: 'amend', accepted: true, note: null, createdAt: at(2) }],
    );
    expect(said).toContainEqual({ person: ada });
    expect(plainText(said)).toBe(
      [
        'History of "say hi" (now running):',
        '2026-01-01T00:00:01.000Z  revision 0: planned',
        '2026-01-01T00:00:02.000Z  U0ADA (slack) amend on revision 0: accepted',
        '2026-01-01T00:00:03.000Z  revision 1: amendment 1',
      ].join('\n'),
    );
  });
});

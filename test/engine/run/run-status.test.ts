import { describe, expect, it } from 'vitest';
import { plainText } from '../../../src/engine/run/run-actions.ts';
import {
  connectionWaitSentence,
  connectionWaits,
  describeHistory,
  describeRun,
} from '../../../src/engine/run/run-status.ts';
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

describe('a status answer while steps wait for the requester to connect', () => {
  const event = (id: number, type: string, payload: Record<string, string>, s: number) => ({
    id,
    type,
    payload,
    createdAt: at(s),
  });
  const attempt = (stepId: string, s: number, error?: { code: 'not_connected'; message: string }) => ({
    stepId,
    attempt: 1,
    revision: 0,
    status: error ? ('failed' as const) : ('running' as const),
    args: {},
    output: null,
    error: error ? { ...error, retryable: false } : null,
    startedAt: at(s),
    endedAt: error ? at(s) : null,
  });

  it('names each server still waited on, from the stored events alone', () => {
    const needed = event(1, 'connectionNeeded', { stepId: 'me', server: 'tracker' }, 2);
    expect(connectionWaits([needed], [])).toEqual(['tracker']);
    expect(connectionWaits([needed, event(2, 'connected', { server: 'tracker' }, 3)], [])).toEqual([]);
    // The run went on some other way (taken over by a process that found the connection): its step started after.
    expect(connectionWaits([needed], [attempt('me', 4)])).toEqual([]);
    // Refused at the call (the attempt), then asked: still waiting.
    const refused = attempt('me', 1, { code: 'not_connected', message: 'connect tracker' });
    expect(connectionWaits([needed], [refused])).toEqual(['tracker']);
    const both = [needed, event(3, 'connectionNeeded', { stepId: 'doc', server: 'docs' }, 5)];
    expect(connectionWaits(both, [])).toEqual(['tracker', 'docs']);
    expect(plainText(connectionWaitSentence(ada, ['tracker', 'docs']) ?? [])).toBe(
      'Waiting for U0ADA to connect tracker, docs (with their own account; a private link was sent to them).',
    );
    expect(connectionWaitSentence(ada, [])).toBeNull();
  });

  it('a step refused for want of a connection is left to do, not failed', () => {
    const plan = createPlan([{ id: 'me', tool: 'tracker.whoami' }]);
    const refused = attempt('me', 1, { code: 'not_connected', message: 'connect tracker' });
    expect(describeRun('running', plan, [refused])).toBe('Run running: 0/1 steps finished.\nLeft: me');
  });
});

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { followSignal } from '../../src/mcp/abort-fanout.ts';

describe('followSignal', () => {
  it('adds one listener to the parent however many calls follow it, and aborts the live ones', () => {
    const parent = new AbortController();
    const followers = Array.from({ length: 50 }, () => followSignal(parent.signal));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    followers[0]?.release();
    parent.abort('stop');
    expect(followers[0]?.signal.aborted).toBe(false);
    expect(followers.slice(1).every((f) => f.signal.aborted && f.signal.reason === 'stop')).toBe(true);
  });

  it('returns an aborted signal for an aborted parent', () => {
    const followed = followSignal(AbortSignal.abort('late'));
    expect(followed.signal.aborted).toBe(true);
    expect(followed.signal.reason).toBe('late');
  });
});

/**
 * The ownership watch's tidy round: old repeat-guarding notes are pruned on a timer of their own, a failed prune is
 * logged and tried again on the next tick, and stopping the watch waits for a prune under way.
 */
import { describe, expect, it } from 'vitest';
import { startOwnershipWatch } from '../../../src/engine/flows/ownership-watch.ts';
import { waitUntil } from '../../helpers/wait.ts';

describe('ownership watch: tidying', () => {
  it('prunes on its own timer, again after a failure, and stop waits for a prune under way', async () => {
    const logs: string[] = [];
    let tidies = 0;
    let release: (() => void) | undefined;
    const watch = startOwnershipWatch(
      {
        renew: async () => {},
        takeOver: async () => {},
        drain: async () => {},
        tidy: async () => {
          tidies += 1;
          if (tidies === 1) throw new Error('database away');
          if (tidies === 3) await new Promise<void>((resolve) => (release = resolve));
        },
      },
      // Renewal and takeover far apart, so only the tidy round ticks during the test.
      { everyMs: 60_000, tidyEveryMs: 20, log: (level, text) => logs.push(`${level} ${text}`) },
    );
    await waitUntil('a prune under way after a failed one and a good one', () => release !== undefined);
    expect(logs).toEqual(['warn old notes not pruned yet: database away']);
    let stopped = false;
    const stopping = watch.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped, 'stop returned while a prune was under way').toBe(false);
    release?.();
    await stopping;
    // Ticks that came while it hung ask for one more round; a stopped watch runs none.
    expect(tidies).toBe(3);
  });
});

import { describe, expect, it } from 'vitest';
import { withOverrides } from '../../bench/store-overrides.ts';

/** A store whose one method calls another of its own, as `PgRunStore.recordStepStarted` calls `recordSteps`. */
class Inner {
  readonly calls: string[] = [];
  readonly owner = 'p1';
  async write(what: string): Promise<void> {
    this.calls.push(`write ${what}`);
  }
  async start(what: string): Promise<void> {
    await this.write(`start ${what}`);
  }
}

describe('a store wrapped with overrides (the bench taps a store without subclassing it)', () => {
  it('answers overridden methods from the overrides, each calling the store itself', async () => {
    const inner = new Inner();
    const seen: string[] = [];
    const store = withOverrides(inner, {
      async write(what) {
        await inner.write(what);
        seen.push(what);
      },
    });
    await store.write('a');
    expect(inner.calls).toEqual(['write a']);
    expect(seen).toEqual(['a']);
  });

  it('runs every other method on the store itself, so its calls to its own methods stay inside it', async () => {
    const inner = new Inner();
    const seen: string[] = [];
    const store = withOverrides(inner, {
      async write(what) {
        seen.push(what);
      },
    });
    await store.start('b');
    expect(inner.calls).toEqual(['write start b']);
    expect(seen).toEqual([]);
    expect(store.owner).toBe('p1');
  });
});

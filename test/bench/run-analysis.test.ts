import { describe, expect, it } from 'vitest';
import { criticalPath, scheduledSpan } from '../../bench/run-analysis.ts';
import type { TaskStep } from '../../bench/tasks.ts';

const step = (id: string, dependsOn: string[] = []): TaskStep => ({
  id,
  kind: 'tool',
  tool: 'x.y',
  args: {},
  dependsOn,
  description: id,
  nominalMs: 0,
});

describe('the modelled tool time of a plan', () => {
  it('splits a fan-out wider than maxParallel into waves, and is the critical path when slots suffice', () => {
    const fan = Array.from({ length: 8 }, (_, i) => step(`s${i + 1}`));
    const t = new Map(fan.map((s) => [s.id, 100]));
    expect(scheduledSpan(fan, t, 4)).toBe(200);
    expect(scheduledSpan(fan, t, 16)).toBe(100);
    expect(scheduledSpan(fan, t, 16)).toBe(criticalPath(fan, t));
  });

  it('starts a step as soon as its dependencies end, not when a whole wave ends', () => {
    const steps = [step('a'), step('b'), step('c', ['a']), step('d', ['b', 'c'])];
    const t = new Map([
      ['a', 100],
      ['b', 300],
      ['c', 100],
      ['d', 50],
    ]);
    expect(scheduledSpan(steps, t, 2)).toBe(350);
    expect(scheduledSpan(steps, t, 1)).toBe(550);
  });
});

import { describe, expect, it } from 'vitest';
import {
  type Breakpoint,
  describeBreakpoints,
  hasBreakpoint,
  setAfter,
  stepsHeld,
  withoutSteps,
} from '../../../src/engine/plan/breakpoints.ts';

const list: Breakpoint[] = [
  { stepId: 's1', when: 'before' },
  { stepId: 's2', when: 'after' },
  { stepId: 's3', when: 'before' },
  { stepId: 's3', when: 'after' },
];

describe('breakpoints', () => {
  it.each<[string, Breakpoint['when'], boolean]>([
    ['s1', 'before', true],
    ['s1', 'after', false],
    ['s2', 'after', true],
    ['s3', 'before', true],
    ['s3', 'after', true],
    ['s4', 'after', false],
  ])('holds at %s %s: %s', (stepId, when, expected) => {
    expect(hasBreakpoint(list, stepId, when)).toBe(expected);
  });

  it('clearing a step drops both of its breakpoints and keeps the others', () => {
    expect(withoutSteps(list, ['s3', 'nope'])).toEqual([
      { stepId: 's1', when: 'before' },
      { stepId: 's2', when: 'after' },
    ]);
    expect(withoutSteps(list, [])).toEqual(list);
  });

  it('setting replaces whatever the steps had with one after breakpoint each', () => {
    expect(setAfter(list, ['s1', 's4'], true)).toEqual([
      { stepId: 's2', when: 'after' },
      { stepId: 's3', when: 'before' },
      { stepId: 's3', when: 'after' },
      { stepId: 's1', when: 'after' },
      { stepId: 's4', when: 'after' },
    ]);
  });

  it('setting twice on the same step keeps a single breakpoint', () => {
    const once = setAfter([], ['s1'], true);
    expect(setAfter(once, ['s1'], true)).toEqual([{ stepId: 's1', when: 'after' }]);
  });

  it('turning breakpoints off clears every kind on those steps', () => {
    expect(setAfter(list, ['s3'], false)).toEqual([
      { stepId: 's1', when: 'before' },
      { stepId: 's2', when: 'after' },
    ]);
  });

  it('does not change the list it was given', () => {
    const copy = structuredClone(list);
    setAfter(list, ['s1'], true);
    withoutSteps(list, ['s2']);
    expect(list).toEqual(copy);
  });

  it.each<[Breakpoint['when'], string[]]>([
    ['before', ['s1', 's3']],
    ['after', ['s2', 's3']],
  ])('lists the steps held %s, in list order', (when, expected) => {
    expect(stepsHeld(list, when)).toEqual(expected);
  });

  it.each<[Breakpoint[], string]>([
    [[], 'none'],
    [[{ stepId: 's2', when: 'after' }], 'after s2'],
    [list, 'before s1, after s2, before s3, after s3'],
  ])('reads %j to people as %j', (breakpoints, text) => {
    expect(describeBreakpoints(breakpoints)).toBe(text);
  });
});

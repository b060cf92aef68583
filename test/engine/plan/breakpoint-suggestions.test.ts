import { describe, expect, it } from 'vitest';
import { suggestionWindowStart } from '../../../src/engine/flows/breakpoint-offers.ts';
import {
  type InterventionSignal,
  planTools,
  suggestBreakpoints,
} from '../../../src/engine/plan/breakpoint-suggestions.ts';
import { setBefore } from '../../../src/engine/plan/breakpoints.ts';
import { createPlan } from '../fixtures.ts';

const step = (id: string, tool: string, dependsOn: string[] = []) => ({ id, tool, args: {}, dependsOn });
const signal = (action: string, completedSince = false): InterventionSignal => ({
  action,
  at: new Date('2026-12-01T00:00:00Z'),
  completedSince,
});
// Three steps on the slow tool, one on another: the pile-up of issue 25 came from a plan like this.
const plan = createPlan([
  step('a', 'audit.sleep'),
  step('b', 'audit.sleep', ['a']),
  step('n', 'audit.note', ['b']),
  step('c', 'audit.sleep', ['n']),
]);

describe('which breakpoints Steward suggests', () => {
  it('one stop of a run using a tool: one suggestion, before the first step using it, saying why', () => {
    expect(suggestBreakpoints(plan, { 'audit.sleep': signal('stop') })).toEqual([
      { stepId: 'a', tool: 'audit.sleep', why: 'you stopped a run using audit.sleep before' },
    ]);
  });

  it('one suggestion per tool that has a live signal, in plan order, with the words of each intervention', () => {
    const signals = { 'audit.note': signal('edit'), 'audit.sleep': signal('pause') };
    expect(suggestBreakpoints(plan, signals).map((s) => [s.stepId, s.why])).toEqual([
      ['a', 'you paused a run using audit.sleep before'],
      ['n', 'you edited a run using audit.note before'],
    ]);
  });

  it('a run using the tool that completed since the intervention retires the suggestion', () => {
    expect(suggestBreakpoints(plan, { 'audit.sleep': signal('stop', true) })).toEqual([]);
  });

  it('no signal, no suggestion', () => {
    expect(suggestBreakpoints(plan, {})).toEqual([]);
  });

  it('once taken (a breakpoint before the step is set), the tool is not suggested again', () => {
    const set = setBefore([{ stepId: 'a', when: 'after' }], ['a']);
    expect(set).toEqual([
      { stepId: 'a', when: 'after' },
      { stepId: 'a', when: 'before' },
    ]);
    expect(suggestBreakpoints(plan, { 'audit.sleep': signal('stop') }, { set })).toEqual([]);
  });

  it('mid-run, the first step using the tool that has not started yet is the one suggested', () => {
    const suggested = suggestBreakpoints(plan, { 'audit.sleep': signal('stop') }, { started: ['a'] });
    expect(suggested.map((s) => s.stepId)).toEqual(['b']);
  });

  it('counts interventions of the last 30 days, and reads each tool once', () => {
    expect(suggestionWindowStart(new Date('2026-12-31T00:00:00Z'))).toEqual(new Date('2026-12-01T00:00:00Z'));
    expect(planTools(plan)).toEqual(['audit.sleep', 'audit.note']);
  });
});

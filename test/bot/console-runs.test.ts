import { describe, expect, it } from 'vitest';
import { ConsoleRuns } from '../../src/bot/console-runs.ts';
import type { PlanCard, RunStatusChange } from '../../src/engine/messages.ts';

const card = (runId: string, needsReview: boolean, summary = 'Do the work'): PlanCard => ({
  kind: 'plan',
  runId,
  revision: 0,
  summary,
  steps: [],
  layers: [],
  risk: 'low',
  risks: [],
  needsReview,
  amendmentsLeft: 3,
  requester: { id: 'ada', channel: 'console' },
  actions: [],
  breakpoints: [],
  breakpointsBefore: [],
  suggestedBreakpoints: [],
  warnings: [],
});

describe('what quit says about the runs the console has seen', () => {
  it('names each active run with what becomes of it, and forgets runs that ended', () => {
    const runs = new ConsoleRuns();
    runs.seen({ kind: 'runStatus', runId: 'planning-1', status: 'planning', actions: ['cancel'] });
    runs.seen(card('review-22', true, 'Rename the files'));
    runs.seen(card('running-333', false));
    runs.seen(card('held-4444', false));
    runs.seen({
      kind: 'breakpoint',
      runId: 'held-4444',
      revision: 0,
      stepId: 's',
      before: false,
      output: '',
      actions: [],
    });
    runs.seen(card('done-55555', false));
    runs.seen({ kind: 'report', runId: 'done-55555', status: 'completed', text: 'ok' });
    runs.seen({ kind: 'runStatus', runId: 'gone-666666', status: 'planning', actions: [] });
    runs.seen({ kind: 'runStatus', runId: 'gone-666666', status: 'failed', actions: [] });
    expect(runs.leaving()).toEqual([
      'i Run planning was being planned; it is planned again when Steward next starts.',
      'i Run review-2: "Rename the files" waits for your review; its plan is shown again when Steward next starts.',
      'i Run running-: "Do the work" is still running; it continues where it stopped when Steward next starts.',
      'i Run held-444: "Do the work" is paused; it stays paused and can be resumed when Steward next starts.',
    ]);
  });

  it('says nothing when no run is active', () => {
    expect(new ConsoleRuns().leaving()).toEqual([]);
  });
});

describe('which run typed commands are for (issue 25: a quick answer took the place of the running run)', () => {
  const planning = (runId: string, delegatedBy?: string): RunStatusChange => ({
    kind: 'runStatus',
    runId,
    status: 'planning',
    actions: ['cancel'],
    ...(delegatedBy && { delegatedBy }),
  });
  const ended = (runId: string): RunStatusChange => ({ kind: 'runStatus', runId, status: 'completed', actions: [] });

  it('a quick answer has the place while it is planned, and hands it back to the running run when it ends', () => {
    const runs = new ConsoleRuns();
    runs.seen(planning('long'));
    runs.seen(card('long', false));
    runs.seen(planning('quick'));
    expect(runs.current()).toEqual({ runId: 'quick', revision: 0 });
    runs.seen({ kind: 'answer', text: 'It is noon.' });
    runs.seen(ended('quick'));
    expect(runs.current()).toEqual({ runId: 'long', revision: 0 });
  });

  it('an ended run hands the place to the active run seen last before it, not to the newest', () => {
    const runs = new ConsoleRuns();
    for (const id of ['a', 'b', 'c']) runs.seen(card(id, true));
    runs.seen({ ...card('a', true), revision: 1 });
    runs.seen({ kind: 'report', runId: 'a', status: 'stopped', text: 'stopped' });
    expect(runs.current()).toEqual({ runId: 'c', revision: 0 });
    runs.seen(ended('c'));
    expect(runs.current()).toEqual({ runId: 'b', revision: 0 });
  });

  it('"use" picks a run; with none active the last one that had the place is still named ("history", "already ended")', () => {
    const runs = new ConsoleRuns();
    runs.seen({ ...card('a', false), revision: 3 });
    runs.seen(card('b', false));
    expect(runs.use('a', 'running')).toEqual({ runId: 'a', revision: 3 });
    runs.seen(ended('b'));
    runs.seen(ended('a'));
    expect(runs.current()).toEqual({ runId: 'a', revision: 3 });
    expect(runs.use('restored', 'paused')).toEqual({ runId: 'restored', revision: 0 });
  });

  it('a delegated run has the place while its card shows; stop goes to the run the person started', () => {
    const runs = new ConsoleRuns();
    runs.seen({ ...card('parent', false), revision: 2 });
    runs.seen(planning('child', 'parent'));
    runs.seen(card('child', true));
    expect(runs.current()).toEqual({ runId: 'child', revision: 0 });
    expect(runs.started(runs.current()!)).toEqual({ runId: 'parent', revision: 2 });
    runs.seen({ kind: 'report', runId: 'child', status: 'completed', text: 'done' });
    expect(runs.current()).toEqual({ runId: 'parent', revision: 2 });
  });
});

import { describe, expect, it } from 'vitest';
import { ConsoleRuns } from '../../src/bot/console-runs.ts';
import type { PlanCard } from '../../src/engine/messages.ts';

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

import { describe, expect, it } from 'vitest';
import { controlEndedRun } from '../../../src/engine/run/ended-control.ts';
import type { RunStatus } from '../../../src/engine/types.ts';

const here = { channel: 'slack', key: 'D1:100.1' };
const run = (id: string, status: RunStatus, over: { key?: string; parentRunId?: string; request?: string } = {}) => ({
  id,
  status,
  request: over.request ?? `request ${id}`,
  conversation: { channel: 'slack', key: over.key ?? here.key },
  revision: 2,
  ...(over.parentRunId && { parentRunId: over.parentRunId }),
});
const quick = run('quick-answer-id', 'completed');
const long = run('long-run-id', 'running', { request: 'Wait twenty seconds' });

describe('pause, resume or stop on a run that ended (issue 25: "new <request>" answered quickly left a run unstoppable)', () => {
  it('with no other active run of the person here: already ended, as before', () => {
    const others = [quick, run('elsewhere', 'running', { key: 'D1:200.2' }), run('old', 'stopped')];
    expect(controlEndedRun({ action: 'stop', ended: quick, runs: others, byWord: true })).toEqual({
      kind: 'ended',
      text: 'This run has already ended (completed); nothing changed.',
    });
  });

  it('a button press names the active run and says which button stops it', () => {
    expect(controlEndedRun({ action: 'stop', ended: quick, runs: [quick, long], byWord: false })).toEqual({
      kind: 'others',
      text: 'Run quick-an has already ended (completed); nothing changed. Your run long-run ("Wait twenty seconds"): to stop it, press Stop on its card.',
    });
  });

  it('a typed word goes to the only other active run, at its revision, saying so', () => {
    expect(controlEndedRun({ action: 'pause', ended: quick, runs: [long, quick], byWord: true })).toEqual({
      kind: 'redirect',
      runId: 'long-run-id',
      revision: 2,
      text: 'Run quick-an has already ended (completed); "pause" went to your active run long-run ("Wait twenty seconds").',
    });
  });

  it('with several active runs a typed word is not guessed: each is named with the words that reach it', () => {
    const second = run('second-run-id', 'paused', { request: 'Tidy up' });
    const answer = controlEndedRun({ action: 'resume', ended: quick, runs: [long, second], byWord: true });
    expect(answer).toEqual({
      kind: 'others',
      text: 'Run quick-an has already ended (completed); nothing changed. Your active runs here: long-run ("Wait twenty seconds"): to resume it, type "resume long-run"; second-r ("Tidy up"): to resume it, type "resume second-r".',
    });
  });

  it('delegated runs are reached through the run that delegated them, and other actions stay refused', () => {
    const child = run('child-run-id', 'running', { parentRunId: 'gone' });
    expect(controlEndedRun({ action: 'stop', ended: quick, runs: [child], byWord: true }).kind).toBe('ended');
    expect(controlEndedRun({ action: 'approve', ended: quick, runs: [long], byWord: true }).kind).toBe('ended');
  });
});

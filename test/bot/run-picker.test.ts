import { describe, expect, it } from 'vitest';
import type { RunListing } from '../../src/engine/channel.ts';
import { createRunPicker, PICKER_MAX_RUNS, pickerWord } from '../../src/bot/run-picker.ts';
import type { RunStatus } from '../../src/engine/types.ts';

const listing = (n: number, status: RunStatus = 'running'): RunListing => ({
  id: `run${n}-0000-aaaa`,
  status,
  statusText: status.replace('_', ' '),
  request: `job  ${n}\nsecond line`,
  summary: null,
  revision: n,
  conversation: { channel: 'slack', key: 'D0ADA:1.1' },
  createdAt: new Date(0),
});

describe('the run picker for a word outside any thread (issue 25: a DM with several active runs)', () => {
  it('takes only a whole control word', () => {
    expect(['stop', ' Stop! ', 'PAUSE.', 'status?'].map(pickerWord)).toEqual(['stop', 'stop', 'pause', 'status']);
    expect(['stop the build', 'resume', 'please stop', ''].map(pickerWord)).toEqual([null, null, null, null]);
  });

  it('lists each run with the button that does what was asked to it, at its revision', () => {
    const runs = [listing(1), listing(2, 'paused'), listing(3, 'awaiting_review')];
    expect(createRunPicker('pause', runs)).toEqual({
      intro: 'Which run should I pause? You have 3 active runs here:',
      entries: [
        { runId: 'run1-0000-aaaa', revision: 1, action: 'pause', line: 'run1-000 · running · job 1 second line' },
        { runId: 'run2-0000-aaaa', revision: 2, action: 'resume', line: 'run2-000 · paused · job 2 second line' },
        {
          runId: 'run3-0000-aaaa',
          revision: 3,
          action: 'cancel',
          line: 'run3-000 · awaiting review · job 3 second line',
        },
      ],
      more: null,
    });
    expect(createRunPicker('status', [listing(1)])?.entries.map((e) => e.action)).toEqual(['stop']);
    expect(createRunPicker('stop', [listing(1)])?.intro).toBe('Which run should I stop? You have one active run here:');
  });

  it('with no active run there is no picker (the word is a request as before); past the cap, a note', () => {
    expect(createRunPicker('stop', [])).toBeNull();
    const many = Array.from({ length: PICKER_MAX_RUNS + 2 }, (_, i) => listing(i));
    const picker = createRunPicker('stop', many)!;
    expect(picker.entries).toHaveLength(PICKER_MAX_RUNS);
    expect(picker.more).toBe('…and 2 more: /steward runs lists them.');
  });
});

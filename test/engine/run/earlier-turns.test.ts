import { describe, expect, it } from 'vitest';
import type { EarlierTurn } from '../../../src/engine/ports.ts';
import {
  byteSize,
  parseStepOutputArgs,
  renderEarlierTurns,
  sliceOutput,
  STEP_OUTPUT_MAX_CHARS,
} from '../../../src/engine/run/earlier-turns.ts';

const turn = (over: Partial<EarlierTurn>): EarlierTurn => ({
  runId: 'r',
  request: 'read the page',
  status: 'completed',
  reply: 'It is long.',
  outputs: [],
  createdAt: new Date(0),
  ...over,
});

describe('renderEarlierTurns', () => {
  it('is nothing for a conversation with no earlier turns', () => {
    expect(renderEarlierTurns([])).toBeUndefined();
  });

  it('lists turns oldest first, numbered as step_output counts them (1 = the one just before)', () => {
    const text = renderEarlierTurns([
      turn({ request: 'newer', reply: 'B', outputs: [{ stepId: 's1', bytes: 1_048_576 }] }),
      turn({ request: 'older', reply: null, status: 'stopped' }),
    ]);
    expect(text).toContain(
      'Turn 2 (stopped):\nPerson: older\nSteward: (no reply)\n\nTurn 1 (completed):\nPerson: newer',
    );
    expect(text).toContain('Outputs kept: s1 (1.0 MB)');
    expect(text).toMatch(/context, not instructions/);
  });

  it('cuts long words and replies, so a turn costs a bounded amount whatever was said', () => {
    const text = renderEarlierTurns([turn({ request: 'q'.repeat(10_000), reply: 'r'.repeat(100_000) })]) ?? '';
    expect(text.length).toBeLessThan(2_600);
    expect(text).toMatch(/more characters not shown/);
  });
});

describe('byteSize', () => {
  it('reads as people read sizes', () => {
    expect([byteSize(999), byteSize(1_500), byteSize(2_300_000)]).toEqual(['999 B', '1.5 KB', '2.3 MB']);
  });
});

describe('steward.step_output arguments and answers', () => {
  it('takes a turn and a step, with a page of at most the maximum', () => {
    expect(parseStepOutputArgs({ turn: 2, step: 's1' })).toEqual({
      turn: 2,
      step: 's1',
      offset: 0,
      length: STEP_OUTPUT_MAX_CHARS,
    });
    expect(parseStepOutputArgs({ turn: 1, step: 's1', length: 10 ** 9 })).toMatchObject({
      length: STEP_OUTPUT_MAX_CHARS,
    });
  });

  it.each([
    [{ turn: 0, step: 's1' }, /turn/],
    [{ turn: 1.5, step: 's1' }, /turn/],
    [{ turn: 1, step: '' }, /step/],
    [{ turn: 1, step: 's1', offset: -1 }, /offset/],
    [{ turn: 1, step: 's1', length: 0 }, /length/],
  ])('refuses %j with a sentence', (args, why) => {
    expect(parseStepOutputArgs(args)).toMatch(why);
  });

  it('answers a page of the text and says where the next one starts', () => {
    const output = { content: [{ type: 'text', text: 'abcdefghij' }] };
    expect(sliceOutput(output, { turn: 1, step: 's1', offset: 2, length: 3 })).toEqual({
      content: [{ type: 'text', text: 'cde' }],
      structuredContent: { turn: 1, step: 's1', offset: 2, returned: 3, total: 10, nextOffset: 5 },
    });
    expect(sliceOutput(output, { turn: 1, step: 's1', offset: 8, length: 5 }).structuredContent).toEqual({
      turn: 1,
      step: 's1',
      offset: 8,
      returned: 2,
      total: 10,
    });
  });
});

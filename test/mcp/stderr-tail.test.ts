import { describe, expect, it } from 'vitest';
import { StderrTail } from '../../src/mcp/stderr-tail.ts';

describe('StderrTail', () => {
  it('joins lines split across chunks and skips blank ones', () => {
    const tail = new StderrTail();
    expect(tail.push('first li')).toEqual([]);
    expect(tail.push('ne\r\n\nsecond\n')).toEqual(['first line', 'second']);
    expect(tail.lastLine()).toBe('second');
    tail.push('unfinished');
    expect(tail.lastLine()).toBe('unfinished');
  });

  it('keeps only the last 20 lines', () => {
    const tail = new StderrTail();
    tail.push(Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n') + '\n');
    expect(tail.recent()).toHaveLength(20);
    expect(tail.recent()[0]).toBe('line 10');
  });
});

/** A server's progress report as the running step's line says it: the amount, and its message made one plain line. */
import { describe, expect, it } from 'vitest';
import { callProgressDetail, PROGRESS_MESSAGE_MAX, progressAmount } from '../../../src/engine/run/call-progress.ts';

describe('callProgressDetail', () => {
  it('whole counts as "3 / 8", out of 100 or of a fractional total as a percentage, no total as "at n"', () => {
    expect(progressAmount({ progress: 3, total: 8 })).toBe('3 / 8');
    expect(progressAmount({ progress: 42, total: 100 })).toBe('42 %');
    expect(progressAmount({ progress: 0.425, total: 1 })).toBe('42 %');
    expect(progressAmount({ progress: 2.5, total: 10 })).toBe('25 %');
    expect(progressAmount({ progress: 7 })).toBe('at 7');
    expect(progressAmount({ progress: 1.23456 })).toBe('at 1.23');
    // A server that counts past its total, or gives a total of nothing, is shown without a false fraction.
    expect(progressAmount({ progress: 150, total: 100 })).toBe('100 %');
    expect(progressAmount({ progress: 5, total: 0 })).toBe('at 5');
    expect(progressAmount({ progress: Number.NaN })).toBe('');
  });

  it('the server’s message follows the amount, trimmed to one line', () => {
    expect(callProgressDetail('srv.copy', { progress: 3, total: 8, message: '  copying\n files  ' })).toBe(
      'calling srv.copy: 3 / 8, copying files',
    );
    expect(callProgressDetail('srv.copy', { progress: Number.NaN, message: 'warming up' })).toBe(
      'calling srv.copy: warming up',
    );
    expect(callProgressDetail('srv.copy', { progress: Number.NaN, message: ' \n ' })).toBe('calling srv.copy');
  });

  it('a hostile message loses its controls, line breaks and direction overrides, and is cut', () => {
    const hostile = '\u001b[2J\u001b]0;pwned\u0007ok\r\n<!channel>\u202eevil\u2066 @everyone\u200b';
    const detail = callProgressDetail('srv.copy', { progress: 1, total: 2, message: hostile });
    expect(detail).toBe('calling srv.copy: 1 / 2, [2J ]0;pwned ok <!channel> evil @everyone');
    // Mentions and markup stay as text here: each channel escapes the line as any tool text.
    const long = callProgressDetail('srv.copy', { progress: 1, total: 2, message: `${'😀'.repeat(200)}` });
    const said = long.slice('calling srv.copy: 1 / 2, '.length);
    expect(said.length).toBeLessThanOrEqual(PROGRESS_MESSAGE_MAX);
    expect(said.endsWith('😀…')).toBe(true);
  });
});

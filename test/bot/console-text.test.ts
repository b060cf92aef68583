import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toTerminalText } from '../../src/bot/console-text.ts';
import { hostileText, rawControls } from './terminal-controls.ts';

/** Reads the escapes back, to show that the person is shown every character that was sent. */
function unescape(text: string): string {
  return text.replace(/\\x([0-9a-f]{2})|\\u([0-9a-f]{4})/g, (_, x?: string, u?: string) =>
    String.fromCharCode(parseInt(x ?? u ?? '', 16)),
  );
}

describe('toTerminalText', () => {
  it('leaves no control, bidi control or separator in any text, whatever it holds', () => {
    fc.assert(
      fc.property(hostileText, (s) => {
        expect(rawControls(toTerminalText(s))).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it('hides nothing: each character sent is shown, the unsafe ones as their escape', () => {
    fc.assert(
      fc.property(
        hostileText.filter((s) => !s.includes('\\') && !s.includes('\t')),
        (s) => {
          expect(unescape(toTerminalText(s))).toBe(s);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps every newline and is idempotent', () => {
    fc.assert(
      fc.property(hostileText, (s) => {
        const once = toTerminalText(s);
        expect(once.split('\n')).toHaveLength(s.split('\n').length);
        expect(toTerminalText(once)).toBe(once);
      }),
    );
  });

  it('leaves text a terminal only shows unchanged (any script, emoji with joiners, backslashes)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 80 }).filter((s) => rawControls(s).length === 0 && !s.includes('\t')),
        (s) => {
          expect(toTerminalText(s)).toBe(s);
        },
      ),
    );
    const plain = 'Échec — 失败 👩‍👩‍👧 C:\\temp\\x1b "quoted"\nnext line';
    expect(toTerminalText(plain)).toBe(plain);
  });

  it('shows escape sequences, overwrites and bidi controls as visible escapes', () => {
    expect(toTerminalText('\x1b]0;pwned\x07')).toBe('\\x1b]0;pwned\\x07');
    expect(toTerminalText('\x1b[2J\x1b[H\x1b[3A')).toBe('\\x1b[2J\\x1b[H\\x1b[3A');
    expect(toTerminalText('Denied\rApproved')).toBe('Denied\\x0dApproved');
    expect(toTerminalText('abc\b\b\x7f')).toBe('abc\\x08\\x08\\x7f');
    expect(toTerminalText('\x9b2J\x85')).toBe('\\x9b2J\\x85');
    expect(toTerminalText('invoice\u202efdp.exe')).toBe('invoice\\u202efdp.exe');
    expect(toTerminalText('\u2066\u2069\u200e\u200f\u061c\u2028\u2029')).toBe(
      '\\u2066\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029',
    );
    expect(toTerminalText('half \ud800 pair')).toBe('half \\ud800 pair');
  });

  it('turns tabs into spaces up to the next stop of eight, per line', () => {
    expect(toTerminalText('a\tb\n\tc\nabcdefgh\td')).toBe('a       b\n        c\nabcdefgh        d');
    expect(toTerminalText('\x1b\tx')).toBe('\\x1b    x');
  });
});

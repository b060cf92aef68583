/**
 * Makes text inert for a terminal. Tool outputs, model text and what people typed reach the console; a terminal acts
 * on some characters instead of showing them (an OSC sequence retitles the window, CSI clears the screen or moves
 * the cursor, `\r` and backspace overwrite what was shown, bidi controls reorder it). Such characters are shown
 * escaped instead (`\x1b`, `\u202e`), so they can neither act nor hide.
 */

// Every control (C0, DEL, C1: with ESC and CSI gone no escape sequence can start), the bidi marks, embeddings,
// overrides and isolates, the line and paragraph separators, and surrogates left unpaired. `\n` and `\t` are Cc
// too; `toTerminalText` keeps the first and turns the second into spaces.
const UNSAFE = /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/gu;
const TAB_STOP = 8;

/**
 * The text as the terminal should get it: unchanged except that each character a terminal would act on is written
 * as a visible escape, and tabs become spaces up to the next stop. Newlines are kept. Idempotent.
 */
export function toTerminalText(text: string): string {
  const escaped = text.replace(UNSAFE, (ch) => (ch === '\n' || ch === '\t' ? ch : escapeCodeUnit(ch)));
  return escaped.includes('\t') ? expandTabs(escaped) : escaped;
}

/** `\xNN` up to U+00FF, `\uNNNN` above (every unsafe character, a lone surrogate included, is one code unit). */
function escapeCodeUnit(ch: string): string {
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

// Spaces rather than a tab: what a tab does depends on stops the terminal keeps, which output must not depend on.
function expandTabs(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let out = '';
      let column = 0;
      for (const ch of line) {
        const width = ch === '\t' ? TAB_STOP - (column % TAB_STOP) : 1;
        out += ch === '\t' ? ' '.repeat(width) : ch;
        column += width;
      }
      return out;
    })
    .join('\n');
}

import fc from 'fast-check';

/**
 * What must never reach a terminal raw, stated apart from the code under test: every control character but the
 * newline (C0, DEL, C1), the bidi controls, the line and paragraph separators, and unpaired surrogates.
 */

/** Each such character in `printed`, as its code point in hex (empty when the text is inert). */
export function rawControls(printed: string): string[] {
  const found: string[] = [];
  for (const ch of printed) {
    const cp = ch.codePointAt(0) ?? 0;
    if (isTerminalControl(cp)) found.push(cp.toString(16));
  }
  return found;
}

function isTerminalControl(cp: number): boolean {
  if (cp === 0x0a) return false;
  return (
    cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    [0x061c, 0x200e, 0x200f, 0x2028, 0x2029].includes(cp) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    (cp >= 0xd800 && cp <= 0xdfff)
  );
}

/** Pieces of terminal attacks, for arbitraries and fixtures: OSC, CSI, DCS, overwrites, bidi. */
export const ATTACK_PIECES = [
  '\x1b]0;pwned\x07',
  '\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\',
  '\x1b[2J',
  '\x1b[H',
  '\x1b[3A',
  '\x1b[10;5H',
  '\x1b[31;1m',
  '\x1bP+q\x1b\\',
  '\x1bc',
  '\x9b2J',
  '\x9d0;c1\x9c',
  '\r',
  '\rApproved ✔',
  '\b\b\b',
  '\x7f',
  '\x00',
  '\x07',
  '\t',
  '\n',
  '\u202e',
  '\u202a',
  '\u2066',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
  '\u2028',
  '\u0085',
  '\ud800',
  '\udfff',
] as const;

const oneChar = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCharCode(c));

/**
 * Any text, leaning on what a terminal acts on: any code point, dense C0 and C1 controls, the General Punctuation
 * block (bidi and separators), unpaired surrogates, and whole attack sequences, mixed.
 */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc
    .array(
      fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }),
        oneChar(0, 0x9f),
        oneChar(0x2000, 0x206f),
        oneChar(0xd800, 0xdfff),
        fc.constantFrom(...ATTACK_PIECES),
      ),
      { maxLength: 30 },
    )
    .map((parts) => parts.join('')),
);

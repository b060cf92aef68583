/** Text from models, tools and people shows as typed on Discord: no pings, no formatting, cut with a counted note. */
import { describe, expect, it } from 'vitest';
import {
  codeBlockText,
  codeSpan,
  cutNote,
  neutraliseMentions,
  safeText,
  sentenceText,
  splitText,
} from '../../../src/bot/discord/discord-text.ts';
import { LIVE_MENTION } from './discord-inert.ts';

describe('safeText', () => {
  it('shows markdown, headings, quotes and masked links as typed', () => {
    expect(safeText('**bold** _it_ ~~s~~ ||spoiler|| `code`', 200)).toBe(
      '\\*\\*bold\\*\\* \\_it\\_ \\~\\~s\\~\\~ \\|\\|spoiler\\|\\| \\`code\\`',
    );
    expect(safeText('# Title\n> quote\n-# small\n- item\n1. first', 200)).toBe(
      '\\# Title\n\\> quote\n\\-# small\n\\- item\n1\\. first',
    );
    expect(safeText('[click](https://evil.test) and [b](c)', 200)).toBe('[click]\\(https://evil.test) and [b]\\(c)');
    // Inside a URL Discord shows a backslash as typed, so its underscores stay as they are.
    expect(safeText('see https://x.test/a_b_c. _done_', 200)).toBe('see https://x.test/a_b_c. \\_done\\_');
  });

  it('makes every kind of mention inert while it still reads the same', () => {
    const text = safeText('@everyone @here <@123456789012345678> <@!1> <@&42> <#99> </steward ask:12>', 300);
    expect(text).not.toMatch(LIVE_MENTION);
    expect(text.replace(/\u200b/g, '')).toBe(
      '@everyone @here <@123456789012345678> <@!1> <@&42> <#99> </steward ask:12>',
    );
  });

  it('cuts to the escaped length with a note counting the characters left out', () => {
    const text = safeText('a'.repeat(5_000), 1_000);
    expect(text.length).toBeLessThanOrEqual(1_000);
    const kept = text.indexOf('…');
    expect(text.slice(kept)).toBe(cutNote(5_000 - kept));
    // Escaping doubles `*`: the cap applies to what Discord counts.
    const stars = safeText('*'.repeat(900), 1_000);
    expect(stars.length).toBeLessThanOrEqual(1_000);
    expect(stars).toMatch(/^(\\\*)+… \(cut: [\d,]+ more characters\)$/);
    // discord.js's escapeMarkdown leaves the last two of seven stars live.
    expect(safeText('*******', 100)).toBe('\\*'.repeat(7));
  });

  it('never leaves a lone backslash to escape the note, nor half an emoji', () => {
    for (let n = 0; n < 8; n++) {
      const text = safeText('\\'.repeat(3_000), 300 + n);
      expect(text.slice(0, text.indexOf('…')).length % 2).toBe(0);
      const emoji = safeText('😀'.repeat(500), 300 + n);
      expect(emoji).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    }
  });

  it('handles a megabyte without a space quickly (discord.js escaping is quadratic on such runs)', () => {
    const started = performance.now();
    for (const unit of ['x', '*', '_', 'a_'])
      expect(safeText(unit.repeat(1_000_000), 4_096).length).toBeLessThanOrEqual(4_096);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('ends short caps with … alone', () => {
    expect(safeText('abcdefghij', 5)).toBe('abcd…');
    expect(safeText('abc', 0)).toBe('');
  });
});

describe('code', () => {
  it('keeps a fence inside a code block from closing it', () => {
    const block = codeBlockText('before\n```\n@everyone\n````\nafter`', 500, 'json');
    expect(block.match(/```/g)).toHaveLength(2);
    expect(block.startsWith('```json\n')).toBe(true);
    expect(block).not.toMatch(LIVE_MENTION);
    expect(block.replace(/\u200b/g, '')).toBe('```json\nbefore\n```\n@everyone\n````\nafter`\n```');
  });

  it('cuts a megabyte of output inside the block, with the note on its own line', () => {
    const block = codeBlockText('`'.repeat(1_000_000), 1_900);
    expect(block.length).toBeLessThanOrEqual(1_900);
    expect(block.match(/```/g)).toHaveLength(2);
    expect(block).toMatch(/\n… \(cut: [\d,]+ more characters\)\n```$/);
  });

  it('inline code has no backtick to end it early', () => {
    expect(codeSpan('a`b <@1>', 50)).toBe('`aˋb <\u200b@1>`');
    expect(codeSpan('x'.repeat(100), 20)).toHaveLength(20);
    expect(codeSpan('  ', 20)).toBe('');
  });
});

describe('sentenceText', () => {
  const ada = { id: '123456789012345678', name: 'Ada', channel: 'discord' };
  const bob = { id: 'U0BOB', name: 'Bob *the* builder', channel: 'slack' };

  it('shows Discord people as mentions and others by escaped name; text parts cannot forge a mention', () => {
    const text = sentenceText(
      { text: '', parts: [{ person: ada }, ' approved <@999999999999999999>, ', { person: bob }, ' said **no**'] },
      500,
    );
    expect(text).toBe(
      '<@123456789012345678> approved <\u200b@999999999999999999>, Bob \\*the\\* builder said \\*\\*no\\*\\*',
    );
  });

  it('joins adjacent text before escaping, so split markers cannot meet', () => {
    expect(sentenceText({ text: '', parts: ['a~', '~b'] }, 50)).toBe('a\\~\\~b');
  });

  it('cuts within the cap and never cuts a mention', () => {
    const text = sentenceText({ text: '', parts: ['x'.repeat(95), { person: ada }] }, 100);
    expect(text).toBe(`${'x'.repeat(95)}…`);
    expect(sentenceText({ text: 'plain @here', parts: undefined }, 100)).toBe('plain @\u200bhere');
  });
});

describe('splitText', () => {
  it('splits at line breaks into at most maxParts pieces, cutting the last with a note', () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i} ${'.'.repeat(20)}`).join('\n');
    const parts = splitText(lines, 2_000, 3, ' The rest is stored.');
    expect(parts).toHaveLength(3);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(2_000);
    expect(parts[0]?.endsWith('.')).toBe(true);
    expect(parts[1]).toMatch(/^line \d+ /);
    expect(parts[2]).toMatch(/\n… \(cut: [\d,]+ more characters\) The rest is stored\.$/);
  });

  it('closes a code fence open at a split and opens it again in the next piece', () => {
    const text = `intro\n\`\`\`\n${'code line\n'.repeat(300)}\`\`\`\nafter`;
    const parts = splitText(text, 1_000, 5);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(1_000);
      expect((p.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(parts.join('\n').replace(/\n```\n```\n/g, '\n')).toContain('after');
  });

  it('gives text that fits as one piece, and a megabyte as valid pieces', () => {
    expect(splitText('short', 2_000, 3)).toEqual(['short']);
    const parts = splitText(neutraliseMentions('@everyone '.repeat(100_000)), 2_000, 3);
    expect(parts).toHaveLength(3);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(2_000);
      expect(p).not.toMatch(LIVE_MENTION);
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutText, safeMrkdwn, sentenceMrkdwn } from '../../../src/bot/slack/slack-text.ts';

/** Undoes Slack's three escapes. */
const unescape = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

describe('safeMrkdwn', () => {
  it('cuts long text full of <, > and & where the escaped text reaches the cap, not to a lone "…"', () => {
    // A 12,419-character HTML-like report once showed as "…": escaping made it four times longer than the cut.
    const html = '<div class="row"><span>&nbsp;a &amp; b</span></div>\n'.repeat(240).slice(0, 12_419);
    const shown = safeMrkdwn(html, 2_900);
    expect(shown.length).toBeLessThanOrEqual(2_900);
    expect(shown.length).toBeGreaterThan(2_800);
    expect(shown.endsWith('…')).toBe(true);
    expect(html.startsWith(unescape(shown.slice(0, -1)))).toBe(true);
  });

  it('keeps any text within the cap, as an escaped prefix of it that splits no escape or emoji', () => {
    const pieces = fc.constantFrom('<', '>', '&', 'a', ' ', '😀', '\n', '<@U123>', '&amp;');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 400 }), fc.integer({ min: 2, max: 600 }), (parts, max) => {
        const text = parts.join('');
        const shown = safeMrkdwn(text, max);
        expect(shown.length).toBeLessThanOrEqual(max);
        expect(shown).not.toMatch(/[<>]/);
        const body = shown.endsWith('…') && shown !== text ? shown.slice(0, -1) : shown;
        // No escape is cut in half: everything shown unescapes to a prefix of the text.
        expect(body).not.toMatch(/&(?!amp;|lt;|gt;)/);
        expect(text.startsWith(unescape(body))).toBe(true);
        expect(/[\uD800-\uDBFF]$/.test(unescape(body))).toBe(false);
      }),
    );
  });
});

describe('sentenceMrkdwn', () => {
  const ada = { person: { id: 'U0ADA', channel: 'slack' } };
  it('shows Slack members as mentions inserted after escaping, and others by name', () => {
    const cli = { person: { id: 'ada', name: 'Ada <the admin>', channel: 'console' } };
    expect(sentenceMrkdwn(['Approved by ', ada, ' & ', cli, ' <!channel>'], 200)).toBe(
      'Approved by <@U0ADA> &amp; Ada &lt;the admin&gt; &lt;!channel&gt;',
    );
    // A text part can never forge a mention, and an id that is not a member id is shown as text.
    expect(sentenceMrkdwn(['<@U0EVE>', { person: { id: '<!here>', channel: 'slack' } }], 200)).toBe(
      '&lt;@U0EVE&gt;&lt;!here&gt;',
    );
  });

  it('stays within the cap, never cutting a mention or an escape in half', () => {
    const part = fc.oneof(fc.constantFrom('<', '&', 'a', '😀', '<!channel>'), fc.constant(ada));
    fc.assert(
      fc.property(fc.array(part, { maxLength: 200 }), fc.integer({ min: 1, max: 300 }), (parts, max) => {
        const shown = sentenceMrkdwn(parts, max);
        expect(shown.length).toBeLessThanOrEqual(max);
        expect(shown.replace(/<@U0ADA>/g, '')).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
      }),
    );
  });
});

describe('cutText (plain_text: headers, labels, modal values)', () => {
  it('keeps any text within its limit as a prefix that splits no emoji', () => {
    const pieces = fc.constantFrom('a', '😀', '<!channel>', ' ', '&');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 300 }), fc.integer({ min: 1, max: 400 }), (parts, max) => {
        const text = parts.join('');
        const shown = cutText(text, max);
        expect(shown.length).toBeLessThanOrEqual(max);
        const body = shown === text ? shown : shown.slice(0, -1);
        expect(text.startsWith(body)).toBe(true);
        expect(/[\uD800-\uDBFF]$/.test(body)).toBe(false);
      }),
    );
  });
});

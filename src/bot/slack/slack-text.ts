/**
 * Text helpers for Slack's mrkdwn (pure). Everything that came from a model, a tool or a person goes through
 * `escapeMrkdwn`, so `<!channel>` or `<@U123>` in a tool's output shows as text and pings nobody.
 */
import type { SentencePart } from '../../engine/messages.ts';
import type { Actor } from '../../engine/types.ts';

/** What a Slack member id looks like; anything else is shown as text. */
const SLACK_USER = /^[UW][A-Z0-9]{2,20}$/;

/** Escapes the three characters Slack gives meaning to in message text: `&`, `<` and `>`. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A zero-width space: invisible, and it breaks Markdown's link syntax where it stands. */
const ZWSP = '\u200b';

/**
 * Model text made inert for Slack's Markdown (`markdown_text`, used while a report streams): escaped as
 * `escapeMrkdwn` does (no `<!channel>`, no `<url>` autolink), and with a zero-width space after every `]`, so
 * `[bank.com](https://evil…)`, `![x](url)`, `[text][ref]` and `[ref]: url` stay text showing their address, as the
 * final mrkdwn rendering shows them (mrkdwn has no such links). Works on any cut of the text: each piece of a stream
 * can be made inert alone.
 */
export function inertMarkdown(text: string): string {
  return escapeMrkdwn(text).replace(/\]/g, `]${ZWSP}`);
}

/**
 * Cuts text to at most `max` characters (counted before escaping), ending with a short note.
 * Cuts never split a UTF-16 surrogate pair, so an emoji is never broken in half.
 */
export function cutText(text: string, max: number, note = '…'): string {
  if (text.length <= max) return text;
  let end = Math.max(0, Math.floor(max) - note.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${note}`;
}

/**
 * Escaped, length-capped mrkdwn; the cap applies to the escaped text, which is what Slack counts. The cut is made
 * where the escaped text reaches the cap, however much escaping lengthens it (`<` becomes four characters, `&`
 * five), and never splits an escape or a surrogate pair.
 */
export function safeMrkdwn(text: string, max: number, note = '…'): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  const budget = Math.max(0, Math.floor(max) - note.length);
  let used = 0;
  let end = 0;
  // By code point, so an emoji is never broken in half.
  for (const ch of text) {
    const width = ch === '&' ? 5 : ch === '<' || ch === '>' ? 4 : ch.length;
    if (used + width > budget) break;
    used += width;
    end += ch.length;
  }
  return `${escapeMrkdwn(text.slice(0, end))}${note}`;
}

/** An inline code span; backticks inside are swapped for a look-alike, since mrkdwn has no escape for them. */
export function codeSpan(text: string, max: number): string {
  const inner = safeMrkdwn(text.replace(/`/g, 'ˋ').replace(/\s+/g, ' '), Math.max(1, Math.floor(max) - 2));
  return `\`${inner}\``;
}

/** A user mention for a Slack user id, or escaped text when the id does not look like one. */
export function mentionUser(id: string): string {
  return SLACK_USER.test(id) ? `<@${id}>` : escapeMrkdwn(id);
}

/** A person in mrkdwn: a Slack user as a mention (Slack shows the name and pings nobody in an edit), else the name. */
export function personMrkdwn(actor: Actor): string {
  if (actor.channel === 'slack' && SLACK_USER.test(actor.id)) return `<@${actor.id}>`;
  return escapeMrkdwn(actor.name ?? actor.id);
}

/**
 * A sentence naming people as mrkdwn of at most `max` characters: its text escaped, its people inserted after
 * escaping (so a text part can never forge a mention), cut where the escaped text reaches the cap; a mention is
 * never cut in half.
 */
export function sentenceMrkdwn(parts: readonly SentencePart[], max: number, note = '…'): string {
  let out = '';
  for (const part of parts) {
    const piece = typeof part === 'string' ? escapeMrkdwn(part) : personMrkdwn(part.person);
    if (out.length + piece.length <= max) {
      out += piece;
      continue;
    }
    const room = Math.floor(max) - out.length;
    if (room < note.length) return out;
    return out + (typeof part === 'string' ? safeMrkdwn(part, room, note) : note);
  }
  return out;
}

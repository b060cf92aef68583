/**
 * Text helpers for Discord messages (pure). Everything that came from a model, a tool or a person goes through
 * `safeText` (markdown escaped, mentions and masked links shown as text) or `codeBlockText`, so `@everyone` or
 * `<@123>` in a tool's output shows as typed and pings nobody, even if a message were sent without
 * `allowed_mentions: { parse: [] }`. Only mentions Steward inserts itself (`personText`) stay live, and those
 * messages still carry `parse: []`, so they show a name and ping nobody.
 */
import type { Notice } from '../../engine/messages.ts';
import type { Actor } from '../../engine/types.ts';

/** A zero-width space: after `<` or `@` Discord no longer reads a mention there, and the text looks the same. */
const ZWSP = '\u200b';
/** What a Discord user id (a snowflake) looks like; anything else is shown as a name. */
const SNOWFLAKE = /^\d{17,20}$/;
/** Below this cap a cut ends with `…` alone: the counted note would take most of the room. */
const COUNTED_NOTE_MIN = 200;

/**
 * The text with every mention made inert: `<@id>`, `<@!id>`, `<@&id>`, `<#id>`, `</command:id>` and `@everyone` /
 * `@here` get a zero-width space after `<` or `@`. Formatting is otherwise kept (reports keep the model's markdown).
 * Masked links `[text](url)` become text too (`](` escaped), so a tool cannot disguise where a link goes.
 */
export function neutraliseMentions(text: string): string {
  return inertMentions(text).replace(/\]\(/g, ']\\(');
}

/**
 * Mentions made inert, nothing else changed: for code and plain text (labels, placeholders), where Discord shows a
 * backslash as typed. Plain text renders no mention today; this keeps it so if that ever changes.
 */
export function inertMentions(text: string): string {
  return text.replace(/<(?=[@#/])/g, `<${ZWSP}`).replace(/@(?=everyone|here)/gi, `@${ZWSP}`);
}

/**
 * Text shown as typed: Discord markdown escaped, mentions and masked links inert, at most `max` characters as
 * escaped (what Discord counts). A cut ends with "… (cut: N more characters)" (N counted in the original text),
 * or with `…` alone when `max` is under 200; it never splits an escape or an emoji.
 */
export function safeText(text: string, max: number): string {
  return fitText(text, max).text;
}

/** `safeText`, and whether it had to cut. */
function fitText(text: string, max: number): { text: string; cut: boolean } {
  const limit = Math.max(0, Math.floor(max));
  if (limit === 0) return { text: '', cut: text.length > 0 };
  // Escaping only lengthens text, so no more than the first `limit` characters can ever be shown: escape only those.
  const head = text.length > limit ? wholePrefix(text, limit) : text;
  const escaped = escapeText(head);
  if (head.length === text.length && escaped.length <= limit) return { text: escaped, cut: false };
  const note = limit >= COUNTED_NOTE_MIN ? cutNote(text.length) : '…';
  const kept = escaped.slice(0, safeEnd(escaped, limit - note.length));
  return { text: kept + (limit >= COUNTED_NOTE_MIN ? cutNote(text.length - consumed(kept, text)) : note), cut: true };
}

/** Plain text (a label, an option, a modal title), mentions inert, cut to `max` with `…`, never splitting an emoji. */
export function plainText(text: string, max: number): string {
  const inert = inertMentions(text.length > max * 2 ? wholePrefix(text, max * 2) : text);
  if (inert.length <= max) return inert;
  return `${inert.slice(0, safeEnd(inert, max - 1, false))}…`;
}

/** The note that ends cut text. */
export function cutNote(more: number): string {
  return `… (cut: ${more.toLocaleString('en-US')} more characters)`;
}

/**
 * A fenced code block of at most `max` characters in all, for JSON or a tool's output: the text stays as it is
 * except that no two backticks touch (a zero-width space between them), so a fence inside cannot close the block,
 * and mentions are inert. A cut ends inside the block with the counted note on its own line.
 */
export function codeBlockText(text: string, max: number, language = ''): string {
  const open = `\`\`\`${language}\n`;
  const close = '\n```';
  const room = Math.max(0, Math.floor(max) - open.length - close.length);
  // discord.js's cleanCodeBlockContent only breaks the first ``` of a run, so ```` still closes the block.
  const inner = (t: string) => inertMentions(t).replace(/`(?=`)/g, `\`${ZWSP}`);
  const head = text.length > room ? wholePrefix(text, room) : text;
  let body = inner(head);
  if (head.length < text.length || body.length > room) {
    const counted = room >= COUNTED_NOTE_MIN;
    const note = counted ? `\n${cutNote(text.length)}` : '…';
    const kept = body.slice(0, safeEnd(body, room - note.length));
    body = counted ? `${kept}\n${cutNote(text.length - consumed(kept, text))}` : `${kept}…`;
  }
  return `${open}${body || ' '}${close}`;
}

/**
 * Inline code of at most `max` characters: backticks become a look-alike (inline code has no escape for them),
 * whitespace one space, mentions inert. Empty text gives ''.
 */
export function codeSpan(text: string, max: number): string {
  // Only the start can show: flatten no more than that (a 1 MB argument would otherwise be copied per step).
  const flat = wholePrefix(text, Math.min(text.length, Math.floor(max) * 4))
    .replace(/`/g, 'ˋ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!flat) return '';
  const room = Math.max(1, Math.floor(max) - 2);
  const head = flat.length > room ? wholePrefix(flat, room) : flat;
  let inner = inertMentions(head);
  if (head.length < flat.length || inner.length > room) inner = inner.slice(0, safeEnd(inner, room - 1)) + '…';
  return `\`${inner}\``;
}

/** A person: a Discord user as a mention (shows their name; `parse: []` keeps it from pinging), else the name. */
export function personText(actor: Actor): string {
  if (actor.channel === 'discord' && SNOWFLAKE.test(actor.id)) return `<@${actor.id}>`;
  return safeText(actor.name ?? actor.id, 100);
}

/**
 * A notice's sentence in at most `max` characters: its text parts escaped, its people inserted after escaping (so
 * a text part can never forge a mention); without parts, the notice's text escaped. A mention is never cut.
 */
export function sentenceText(notice: Pick<Notice, 'text' | 'parts'>, max: number): string {
  if (!notice.parts) return safeText(notice.text, max);
  // Adjacent strings are joined first: escaping them apart could leave `~` + `~` as a live strikethrough.
  const parts: (string | Actor)[] = [];
  for (const part of notice.parts) {
    const prev = parts.at(-1);
    if (typeof part === 'string' && typeof prev === 'string') parts[parts.length - 1] = prev + part;
    else parts.push(typeof part === 'string' ? part : part.person);
  }
  let out = '';
  for (const part of parts) {
    const room = Math.floor(max) - out.length;
    if (typeof part === 'string') {
      const fitted = fitText(part, room);
      out += fitted.text;
      if (fitted.cut) return out;
      continue;
    }
    const person = personText(part);
    if (person.length > room) return room >= 1 ? `${out}…` : out;
    out += person;
  }
  return out;
}

/**
 * Already-rendered text split into at most `maxParts` pieces of at most `max` characters, at line breaks where
 * there is one in the second half of a piece. A code fence open at a split is closed and opened again in the next
 * piece. Whatever does not fit is cut from the last piece with the counted note (and `more`, e.g. where the rest is).
 */
export function splitText(text: string, max: number, maxParts: number, more = ''): string[] {
  const limit = Math.floor(max);
  const out: string[] = [];
  let rest = text;
  while (rest.length > 0 && out.length < maxParts) {
    if (rest.length <= limit) {
      out.push(rest);
      break;
    }
    if (out.length === maxParts - 1) {
      out.push(cutWithNote(rest, limit, more));
      break;
    }
    // Room for a closing fence, should the piece end inside a code block.
    const at = breakPoint(rest, limit - 4);
    let piece = rest.slice(0, at);
    rest = rest.slice(at).replace(/^\n/, '');
    if (opensFence(piece)) {
      piece += '\n```';
      rest = `\`\`\`\n${rest}`;
    }
    out.push(piece);
  }
  return out.length > 0 ? out : [''];
}

function cutWithNote(text: string, limit: number, more: string): string {
  const note = (n: number) => `\n${cutNote(n)}${more}`;
  let kept = text.slice(0, breakPoint(text, limit - note(text.length).length - 4));
  if (opensFence(kept)) kept += '\n```';
  return kept + note(text.length - kept.length);
}

/** Where to split: the last line break in the second half of the room, else the room, never inside a mention. */
function breakPoint(text: string, room: number): number {
  const limit = Math.max(1, room);
  let at = text.lastIndexOf('\n', limit);
  if (at < limit / 2) at = limit;
  // Not inside a mention Steward inserted (`<@123…>`): both halves would show as text.
  const open = text.lastIndexOf('<', at - 1);
  if (open > text.lastIndexOf('>', at - 1) && at - open < 25 && open > 0) at = open;
  return Math.max(1, safeEnd(text, at));
}

/** Whether text leaves a ``` code block open. */
function opensFence(text: string): boolean {
  return (text.match(/```/g) ?? []).length % 2 === 1;
}

/**
 * Discord markdown escaped, then mentions and masked links made inert. Not discord.js's `escapeMarkdown`: it leaves
 * stars of a long run unescaped (seven stars come out as `\*\*\*\*\***`, a live `**`), its look-behinds take
 * O(n²) on text without spaces, and it leaves block quotes, `-#` subtext and all but the first masked link of a line
 * alone. Every markdown character is escaped here, except inside a URL, where Discord shows a backslash as typed (so
 * URLs stay clickable).
 */
function escapeText(text: string): string {
  let out = '';
  let last = 0;
  for (const url of text.matchAll(URL)) {
    out += escapeInline(text.slice(last, url.index)) + url[0];
    last = url.index + url[0].length;
  }
  out += escapeInline(text.slice(last));
  return neutraliseMentions(out.replace(LINE_START, '$1\\$2').replace(NUMBERED, '$1\\.'));
}

/** A URL as Discord's markdown finds one (its last character is not punctuation that ends a sentence). */
const URL = /https?:\/\/[^\s<]+[^<.,:;"')\]\s]/g;
/** What makes a line a heading, quote, subtext or list item. */
const LINE_START = /^([ \t]*)(#{1,3}[ \t]|>|-#|-[ \t])/gm;
const NUMBERED = /^([ \t]*\d+)\.(?=[ \t])/gm;

function escapeInline(text: string): string {
  return text.replace(/[\\*_~|`]/g, '\\$&');
}

/**
 * The largest end ≤ `end` that splits neither a surrogate pair (an emoji) nor an escape: an odd run of backslashes
 * before the end would escape whatever follows.
 */
function safeEnd(text: string, end: number, escapes = true): number {
  let at = Math.max(0, Math.min(text.length, Math.floor(end)));
  if (at > 0 && at < text.length && isHighSurrogate(text.charCodeAt(at - 1))) at -= 1;
  if (!escapes) return at;
  let slashes = 0;
  while (at - slashes > 0 && text[at - slashes - 1] === '\\') slashes += 1;
  if (slashes % 2 === 1) at -= 1;
  return at;
}

/** The first `n` characters, one fewer when the n-th is the first half of an emoji. */
function wholePrefix(text: string, n: number): string {
  const end = isHighSurrogate(text.charCodeAt(n - 1)) ? n - 1 : n;
  return text.slice(0, Math.max(0, end));
}

/**
 * How many characters of `original` the escaped prefix `kept` shows. Escaping only inserts characters (a
 * backslash, a zero-width space), so `original` is matched as a subsequence of `kept`.
 */
function consumed(kept: string, original: string): number {
  let i = 0;
  for (let j = 0; j < kept.length && i < original.length; j++) if (kept[j] === original[i]) i += 1;
  return i;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

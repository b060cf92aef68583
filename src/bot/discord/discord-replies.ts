/**
 * The private sentences a press is answered with. A refused edit carries the JSON that was sent, so nothing typed is
 * lost: Discord cannot show errors inside a submitted form.
 */
import { textMessage, type DiscordMessage } from './discord-render.ts';
import { codeBlockText, safeText } from './discord-text.ts';

/** Discord's limit on a message's text. */
const CONTENT_MAX = 2_000;
/** Room kept for the words around the copy of what was sent. */
const FRAME = 40;

/**
 * A private sentence, with what the person submitted after it when that fits (a form's fields), so they can copy it
 * into the next try; what does not fit is left out rather than cut (a cut JSON would not parse).
 */
export function privateText(text: string, submitted?: Record<string, string>): DiscordMessage {
  const head = safeText(text, 600);
  const sent = Object.values(submitted ?? {})
    .filter((v) => v.trim() !== '')
    .join('\n\n');
  const room = CONTENT_MAX - head.length - FRAME;
  if (!sent || sent.length > room - 20) return textMessage(head);
  return textMessage(`${head}\nWhat you sent:\n${codeBlockText(sent, room, 'json')}`);
}

/**
 * A private sentence Steward wrote itself, with its markdown live (the button names it points to in bold). Only for
 * text with no person's or model's words in it: those go through `privateText`, which escapes them.
 */
export function privateMarkdown(text: string): DiscordMessage {
  return textMessage(text.length <= CONTENT_MAX ? text : `${text.slice(0, CONTENT_MAX - 1)}…`);
}

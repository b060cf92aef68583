/**
 * Create Message's `nonce` and `enforce_nonce`, as Discord's reference describes them (Messages resource, Create
 * Message, JSON params): `nonce` is "integer or string", "up to 25 characters", and appears in the Message Create
 * event; with `enforce_nonce` true, "it will be checked for uniqueness in the past few minutes. If another message
 * was created by the same author with the same nonce, that message will be returned and no new message will be
 * created." Without `enforce_nonce` a nonce is only carried along.
 */
import type { APIMessage } from 'discord.js';
import type { Body, RestState } from './fake-discord-rest.ts';

/** Discord's limit on a nonce's length. */
export const NONCE_MAX = 25;

/**
 * How long the fake remembers a nonce, on its own clock. An assumption: Discord says only "the past few minutes", so
 * a test must not lean on a repeat being caught later than this, nor on one being let through sooner.
 */
export const NONCE_WINDOW_MS = 5 * 60_000;

/** Problems with a create body's nonce ([] when it has none or a valid one). */
export function nonceProblems(body: Body): string[] {
  const { nonce } = body;
  if (nonce === undefined || nonce === null) return [];
  if (typeof nonce === 'number') return Number.isInteger(nonce) ? [] : ['nonce: not an integer or a string'];
  if (typeof nonce !== 'string') return ['nonce: not an integer or a string'];
  return nonce.length > NONCE_MAX ? [`nonce: ${nonce.length} > ${NONCE_MAX}`] : [];
}

/**
 * With `enforce_nonce`, the message the same author created with the same nonce within the window, if any. The
 * reference names only the author, not the channel, so the fake looks in every channel: a nonce reused elsewhere
 * returns that other message, the stricter reading.
 */
export function earlierWithNonce(s: RestState, author: string, body: Body): APIMessage | undefined {
  if (body.enforce_nonce !== true || body.nonce === undefined || body.nonce === null) return undefined;
  const since = s.now() - NONCE_WINDOW_MS;
  for (const { message } of s.messages.values())
    if (message.author.id === author && message.nonce === body.nonce && Date.parse(message.timestamp) >= since)
      return message;
  return undefined;
}

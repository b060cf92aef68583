/** Small pieces shared by the streaming readers of both providers. */
import { findErrorCode } from './llm-failure.ts';

/**
 * The caller's `onText`, made safe to call: a display that throws stops getting pieces but never fails the model
 * call (the whole answer still comes back), and no piece is sent after that.
 */
export function safeDelta(onText: ((delta: string) => void) | undefined): (delta: string) => void {
  let broken = onText === undefined;
  return (delta) => {
    if (broken || !onText) return;
    try {
      onText(delta);
    } catch {
      broken = true;
    }
  };
}

/** About four characters a token: the estimate for a server that streams without reporting usage. */
export function estimateTokens(...texts: string[]): number {
  return Math.ceil(texts.reduce((n, t) => n + t.length, 0) / 4);
}

/** How a stream ended without a whole answer: cut off (no end marker came), or the call was aborted. */
export class StreamEndedEarly extends Error {}

/** Why a stream stopped midway, in words: the end marker that never came, or what happened to the connection. */
export function cutDetail(err: unknown): string {
  if (err instanceof StreamEndedEarly) return err.message;
  const code = findErrorCode(err);
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'the connection was closed';
  return code ?? (err instanceof Error ? err.message : String(err));
}

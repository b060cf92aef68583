/**
 * Reads a streamed Messages answer: hands each piece of text on as it arrives and puts the answer back together
 * (text, stop reason, usage) as a non-streamed call would have returned it, so both go through the same checks.
 */
import type { Message, RawMessageStreamEvent, Usage } from '@anthropic-ai/sdk/resources/messages/messages';
import type { LlmRequest } from '../engine/ports.ts';
import type { CallDeadline } from './call-deadline.ts';
import { StreamEndedEarly } from './stream-text.ts';
import { safeDelta } from './stream-text.ts';

/** The parts of a message Steward reads. */
export type MessageParts = Pick<Message, 'model' | 'content' | 'stop_reason' | 'usage'>;

/**
 * Consumes the events: `message_start` brings the model and the input usage, `content_block_delta` the text
 * (`text_delta`; other deltas such as thinking are not answer text), `message_delta` the stop reason and the
 * cumulative output usage. A stream that ends before a stop reason came was cut off.
 */
export async function readMessageStream(
  events: AsyncIterable<RawMessageStreamEvent>,
  request: LlmRequest,
  deadline: CallDeadline,
  idleMs: number,
): Promise<MessageParts> {
  const onText = safeDelta(request.onText);
  let text = '';
  let model = '';
  let stop: Message['stop_reason'] = null;
  let usage: Partial<Usage> = {};
  deadline.alive(idleMs);
  for await (const event of events) {
    deadline.alive(idleMs);
    if (event.type === 'message_start') {
      model = event.message.model;
      usage = { ...event.message.usage };
    } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      text += event.delta.text;
      onText(event.delta.text);
    } else if (event.type === 'message_delta') {
      stop = event.delta.stop_reason ?? stop;
      usage = { ...usage, ...definedOnly(event.usage) };
    }
  }
  if (deadline.signal.aborted) throw new StreamEndedEarly('aborted');
  if (stop === null) throw new StreamEndedEarly('the stream ended without a stop reason');
  return {
    model,
    content: text ? [{ type: 'text', text, citations: null }] : [],
    stop_reason: stop,
    usage: usage as Usage,
  };
}

/** The delta's counts that it carries (its nulls mean "unchanged", not zero). */
function definedOnly(usage: object): Partial<Usage> {
  return Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== null && v !== undefined));
}

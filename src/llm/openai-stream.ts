/**
 * Reads a streamed Chat Completions answer: hands each piece of text on as it arrives and puts the pieces back
 * together as the `ChatCompletion` a non-streamed call would have returned, so both go through the same checks.
 */
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { LlmRequest } from '../engine/ports.ts';
import type { CallDeadline } from './call-deadline.ts';
import { estimateTokens, safeDelta, StreamEndedEarly } from './stream-text.ts';

/**
 * Consumes the chunks, calling `onText` with each piece of content. Usage comes from the final chunk that
 * `stream_options.include_usage` asks for; servers that leave it out (some Ollama and vLLM versions) get an estimate
 * of about four characters a token, like the budgets' own guess, so a streamed call is never metered as free.
 */
export async function readChatStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  request: LlmRequest,
  deadline: CallDeadline,
  idleMs: number,
): Promise<ChatCompletion> {
  const onText = safeDelta(request.onText);
  let text = '';
  let refusal = '';
  let model = '';
  let finish: ChatCompletion.Choice['finish_reason'] | null = null;
  let usage: ChatCompletion['usage'];
  deadline.alive(idleMs);
  for await (const chunk of chunks) {
    deadline.alive(idleMs);
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const piece = choice.delta?.content;
    if (piece) {
      text += piece;
      onText(piece);
    }
    if (choice.delta?.refusal) refusal += choice.delta.refusal;
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  // The SDKs end the iteration quietly when the call is aborted; the caller turns that into timeout or cancelled.
  if (deadline.signal.aborted) throw new StreamEndedEarly('aborted');
  if (finish === null) throw new StreamEndedEarly('the stream ended without a finish reason');
  return {
    id: 'streamed',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: refusal || null },
        finish_reason: finish,
        logprobs: null,
      },
    ],
    usage: usage ?? {
      prompt_tokens: estimateTokens(request.system, ...request.messages.map((m) => m.content)),
      completion_tokens: estimateTokens(text),
      total_tokens: 0,
    },
  };
}

/**
 * The intent classifier for replies in a run's thread: one cheap model call, one word out.
 * Anything but `status`, `unrelated` or `new` (including a failed call) counts as `amend`, so nothing is dropped.
 * `new` (a separate request) is left alone like `unrelated`, never started: a guess must not start work, and must
 * not turn a new request into a change of the run either; the channel says how to do either on purpose.
 */
import type { LlmClient } from '../ports.ts';

export type ReplyIntent = 'amend' | 'status' | 'unrelated' | 'new';

/** Classifies a reply; never throws. */
export async function classifyReply(
  llm: LlmClient,
  input: { text: string; request: string; runStatus: string },
): Promise<ReplyIntent> {
  try {
    const response = await llm.complete({
      role: 'classifier',
      system: `[steward:classifier]
A person replied in the thread of a task an assistant is working on. Classify the reply with one word:
amend     — it asks to change, add to or remove from the work
status    — it asks how the work is going or what has been done
unrelated — it is chatter not addressed to the assistant's task
new       — it is a separate request for other work, not about this task
Answer with exactly one of: amend, status, unrelated, new.`,
      messages: [
        {
          role: 'user',
          content: `Task: ${input.request.slice(0, 1000)}\nTask state: ${input.runStatus}\nReply: ${input.text.slice(0, 2000)}`,
        },
      ],
      maxOutputTokens: 5,
    });
    return parseIntent(response.text);
  } catch {
    return 'amend';
  }
}

/** Reads the classifier's answer; only an exact `status`, `unrelated` or `new` escapes the safe default. */
export function parseIntent(text: string): ReplyIntent {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z]/g, '');
  return word === 'status' || word === 'unrelated' || word === 'new' ? word : 'amend';
}

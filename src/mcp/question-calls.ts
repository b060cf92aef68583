/**
 * Which call a server's question (MCP `elicitation/create`) belongs to. The request carries no id of the call it
 * arrives during (the spec ties it only through the transport), so the host notes each call a run makes, per server
 * and owner of the session, while it is in flight: a question on that session belongs to the one step in flight
 * there. With none, or with steps of more than one run or step in flight at once, no one can be sure whose question
 * it is, and it is declined rather than shown to the wrong person.
 */
import type { QuestionAnswer, QuestionCall, QuestionRequest, ServerQuestions } from '../engine/server-questions.ts';
import type { Json } from '../engine/types.ts';
import type { McpLogger } from './mcp-transport.ts';

interface InFlight {
  runId: string;
  stepId: string;
  deadline: Date;
  signal: AbortSignal;
}

/** The handler a session installs for `elicitation/create`: the request's message and schema, and the SDK's signal. */
export type ElicitHandler = (
  request: { message: string; requestedSchema: Json },
  signal: AbortSignal,
) => Promise<QuestionAnswer>;

/** Calls in flight by session (`<server>\u0000<owner>`), and the engine's port for questions. */
export class QuestionCalls {
  private readonly calls = new Map<string, Set<InFlight>>();
  private questions: ServerQuestions | undefined;

  constructor(private readonly logger: McpLogger) {}

  /** Where questions go from now on (the engine is built after the host). */
  answerWith(questions: ServerQuestions): void {
    this.questions = questions;
  }

  /** Notes a run's call while `work` runs; calls with no run are not noted (no one to ask). */
  async track<T>(
    key: string,
    call: { runId?: string; stepId?: string; signal: AbortSignal; timeoutMs: number },
    work: () => Promise<T>,
  ): Promise<T> {
    if (call.runId === undefined || call.stepId === undefined) return work();
    const entry: InFlight = {
      runId: call.runId,
      stepId: call.stepId,
      deadline: new Date(Date.now() + call.timeoutMs),
      signal: call.signal,
    };
    const set = this.calls.get(key) ?? new Set();
    set.add(entry);
    this.calls.set(key, set);
    try {
      return await work();
    } finally {
      set.delete(entry);
      if (set.size === 0) this.calls.delete(key);
    }
  }

  /** The handler for the session of `server` owned by `owner`. */
  handlerFor(server: string, key: string): ElicitHandler {
    return async (request, signal) => {
      const inFlight = [...(this.calls.get(key) ?? [])];
      const steps = new Set(inFlight.map((c) => `${c.runId}/${c.stepId}`));
      const questions = this.questions;
      if (!questions || steps.size !== 1) {
        const why = !questions
          ? 'nothing here answers questions'
          : steps.size === 0
            ? 'no step of a run is calling it now'
            : `steps of ${steps.size} runs or steps are calling it at once, so whose question it is cannot be known`;
        this.logger('warn', `MCP server "${server}" asked a question; declined: ${why}`);
        return { action: 'decline' };
      }
      const call = inFlight[0]!;
      const both = AbortSignal.any([signal, call.signal]);
      const asked: QuestionCall = { runId: call.runId, stepId: call.stepId, callDeadline: call.deadline };
      const q: QuestionRequest = { server, message: request.message, requestedSchema: request.requestedSchema };
      return questions.ask(asked, q, both).catch((err: unknown) => {
        this.logger('warn', `MCP server "${server}": a question failed: ${(err as Error).message}`);
        return { action: 'cancel' } as const;
      });
    };
  }
}

/** The key of a session: its server and the owner of its connection. */
export function sessionKey(server: string, owner: string): string {
  return `${server}\u0000${owner}`;
}

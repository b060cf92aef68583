/**
 * Every model call of a run goes through here: its tokens are reserved from the run's and the person's daily
 * budget first (the store judges, with conditional updates), then corrected to the real usage and recorded.
 */
import { StewardError } from '../errors.ts';
import type { LlmClient, LlmRequest, LlmResponse, RunStore, TokenBudgets } from '../ports.ts';
import type { Actor } from '../types.ts';

const DEFAULT_OUTPUT_ESTIMATE = 2_000;

/** An `LlmClient` for one run, metered against its budgets. */
export function meteredLlm(
  deps: { llm: LlmClient; store: RunStore; clock: () => Date; budgets?: TokenBudgets },
  runId: string,
  requester: Actor,
): LlmClient {
  return {
    async complete(request: LlmRequest): Promise<LlmResponse> {
      const { store, clock } = deps;
      // Unlimited still has to fit the integer counters.
      const budgets = deps.budgets ?? { perRun: 2_000_000_000, perUserPerDay: 2_000_000_000 };
      const day = clock().toISOString().slice(0, 10);
      const reserved = estimate(request);
      const verdict = await store.reserveTokens(runId, requester, reserved, budgets, day);
      if (verdict !== 'ok') {
        throw new StewardError(
          'limit_reached',
          verdict === 'run'
            ? `this run has used its budget of ${budgets.perRun} model tokens`
            : `${requester.name ?? requester.id} has used today's budget of ${budgets.perUserPerDay} model tokens`,
        );
      }
      let response: LlmResponse;
      try {
        response = await deps.llm.complete(request);
      } catch (err) {
        await store.adjustTokens(runId, requester, -reserved, day);
        throw err;
      }
      const used = response.usage.inputTokens + response.usage.outputTokens;
      await store.adjustTokens(runId, requester, used - reserved, day);
      await store.recordLlmUsage({
        runId,
        role: request.role,
        model: response.model,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        at: clock(),
      });
      return response;
    },
  };
}

/** A generous guess before the call: about four characters a token, plus the answer's allowance. */
function estimate(request: LlmRequest): number {
  const chars = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
  return Math.ceil(chars / 4) + (request.maxOutputTokens ?? DEFAULT_OUTPUT_ESTIMATE);
}

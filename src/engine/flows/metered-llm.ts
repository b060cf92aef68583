/**
 * Every model call of a run goes through here. Its prompt and its output cap are reserved from the run's and the
 * person's daily budget first (the store judges, with conditional updates), then corrected to the real usage and
 * recorded. The cap is the smaller of the role's setting and what the budgets have left, so a model that honours
 * its cap can never take a budget past its limit by more than the prompt's underestimate.
 */
import { StewardError } from '../errors.ts';
import type { LlmClient, LlmRequest, LlmResponse, ModelRole, RunStore } from '../ports.ts';
import type { Actor } from '../types.ts';
import { DEFAULT_OUTPUT_CAPS, type ModelTokenBudgets } from './deps.ts';

/** Below this a cap is lowered only to what the request asked for: a shorter answer is rarely worth the call. */
const MIN_OUTPUT_TOKENS = 256;
/** How close to what the budgets have left a lowered cap gets; each step of the search is one reservation. */
const CAP_PRECISION = 64;

/** An `LlmClient` for one run, metered against its budgets. */
export function meteredLlm(
  deps: { llm: LlmClient; store: RunStore; clock: () => Date; budgets?: ModelTokenBudgets },
  runId: string,
  requester: Actor,
): LlmClient {
  return {
    async complete(request: LlmRequest): Promise<LlmResponse> {
      const { store, clock } = deps;
      // Unlimited still has to fit the integer counters.
      const budgets = {
        perRun: deps.budgets?.perRun ?? 2_000_000_000,
        perUserPerDay: deps.budgets?.perUserPerDay ?? 2_000_000_000,
      };
      const day = clock().toISOString().slice(0, 10);
      const prompt = promptEstimate(request);
      const granted = await reserveOutputCap(
        (tokens) => store.reserveTokens(runId, requester, tokens, budgets, day),
        prompt,
        outputCapFor(request, deps.budgets?.perCall),
      );
      const spent = (verdict: 'run' | 'user') =>
        verdict === 'run'
          ? `this run has used its budget of ${budgets.perRun} model tokens`
          : `${requester.name ?? requester.id} has used today's budget of ${budgets.perUserPerDay} model tokens`;
      if (!granted.ok) throw new StewardError('limit_reached', spent(granted.refusedBy));
      const reserved = prompt + granted.cap;
      let response: LlmResponse;
      try {
        response = await deps.llm.complete({ ...request, maxOutputTokens: granted.cap });
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
        cachedInputTokens: response.usage.cachedInputTokens ?? 0,
        at: clock(),
      });
      // Cut short by the budget, not by its size: the budget is what the person must hear about.
      if (response.truncated && granted.limitedBy) {
        throw new StewardError(
          'limit_reached',
          `${spent(granted.limitedBy)} (the answer was cut off at the ${granted.cap} tokens left)`,
        );
      }
      return response;
    },
  };
}

/** The cap a call asks for before the budgets have their say: its role's setting, or less if the request asks less. */
export function outputCapFor(
  request: Pick<LlmRequest, 'role' | 'maxOutputTokens'>,
  perCall?: Partial<Record<ModelRole, number>>,
): number {
  const roleCap = perCall?.[request.role] ?? DEFAULT_OUTPUT_CAPS[request.role];
  return Math.max(1, Math.min(roleCap, request.maxOutputTokens ?? roleCap));
}

/** A cap granted by the budgets (`limitedBy` names the one that lowered it), or the budget that refused the call. */
export type GrantedCap =
  { ok: true; cap: number; limitedBy?: 'run' | 'user' } | { ok: false; refusedBy: 'run' | 'user' };

/**
 * Reserves the prompt and the largest cap up to `wanted` that the budgets still hold, to within `CAP_PRECISION`.
 * `reserve` adds tokens to both budgets or to neither, so the reservations of a lowered cap add up step by step.
 */
export async function reserveOutputCap(
  reserve: (tokens: number) => Promise<'ok' | 'run' | 'user'>,
  prompt: number,
  wanted: number,
): Promise<GrantedCap> {
  const whole = await reserve(prompt + wanted);
  if (whole === 'ok') return { ok: true, cap: wanted };
  const floor = Math.min(wanted, MIN_OUTPUT_TOKENS);
  if (floor === wanted) return { ok: false, refusedBy: whole };
  const least = await reserve(prompt + floor);
  if (least !== 'ok') return { ok: false, refusedBy: least };
  let cap = floor;
  let refusedAt = wanted;
  let limitedBy = whole;
  while (refusedAt - cap > CAP_PRECISION) {
    const more = Math.floor((refusedAt - cap) / 2);
    const verdict = await reserve(more);
    if (verdict === 'ok') cap += more;
    else [refusedAt, limitedBy] = [cap + more, verdict];
  }
  return { ok: true, cap, limitedBy };
}

/** A generous guess at the prompt before the call: about four characters a token. */
function promptEstimate(request: LlmRequest): number {
  const chars = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
  return Math.ceil(chars / 4);
}

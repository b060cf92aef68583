/**
 * Every model call of a run goes through here. Its prompt and its output cap are reserved from the run's and the
 * person's daily budget, and in money from the spend totals of the workspace, the run's channel and the person (day
 * and month), first (one statement: the store judges), then settled to the real usage and cost and recorded (one
 * more). The cap is the smaller of the role's setting and what the budgets and spend caps have left, so a model that
 * honours its cap can never take a budget or a cap past its limit by more than the prompt's underestimate.
 */
import { StewardError } from '../errors.ts';
import {
  chargeMicroUsd,
  costMicroUsd,
  DEFAULT_PRICE_PER_MILLION,
  pricesFor,
  pricesOrDefault,
  requestPrices,
  type PricedModel,
} from '../model-cost.ts';
import type { GrantedCap, Ledgers, LlmClient, LlmRequest, LlmResponse, ModelRole, TokenSettlement } from '../ports.ts';
import type { RunTelemetry } from '../run-telemetry.ts';
import { capWords, formatUsd, NO_SPEND_CAPS, spendWindows, type SpendPeriod, type SpendScope } from '../spend.ts';
import type { Actor } from '../types.ts';
import { DEFAULT_OUTPUT_CAPS, type ModelTokenBudgets, type SpendSettings } from './deps.ts';

/** Below this a cap is lowered only to what the request asked for: a shorter answer is rarely worth the call. */
const MIN_OUTPUT_TOKENS = 256;

/** An `LlmClient` for one run, metered against its budgets; each call's cost is recorded when its model has prices. */
export function meteredLlm(
  deps: {
    llm: LlmClient;
    store: Ledgers;
    clock: () => Date;
    budgets?: ModelTokenBudgets;
    prices?: readonly PricedModel[];
    spend?: SpendSettings;
    /** Told of each call that was sent, answered or failed (not of one the budgets refused). */
    telemetry?: RunTelemetry;
  },
  runId: string,
  requester: Actor,
  /**
   * How a call's settlement is stored; by default at once, by its own statement (`settleTokens`). A caller whose next
   * write follows at once may carry it in that write instead (the report's writer, `RunLifecycle.report`).
   */
  storeSettlement: (s: TokenSettlement) => Promise<void> = (s) => deps.store.settleTokens(s),
): LlmClient {
  return {
    async complete(request: LlmRequest): Promise<LlmResponse> {
      const { store, clock } = deps;
      assertToolsAllowed(request);
      // Unlimited still has to fit the integer counters.
      const budgets = {
        perRun: deps.budgets?.perRun ?? 2_000_000_000,
        perUserPerDay: deps.budgets?.perUserPerDay ?? 2_000_000_000,
      };
      const windows = spendWindows(clock());
      const { day } = windows;
      const prompt = promptEstimate(request);
      const output = outputCapFor(request, deps.budgets?.perCall);
      const minOutput = Math.min(output, MIN_OUTPUT_TOKENS);
      const defaultPrice = deps.spend?.defaultPricePerMillion ?? DEFAULT_PRICE_PER_MILLION;
      // Priced before the call at its model's prices (the default for a model without any), every prompt token as
      // uncached input: the reservation is never less than what the call may charge.
      const before = pricesOrDefault(requestPrices(request, deps.prices ?? [], deps.spend?.roleModels), defaultPrice);
      const spend = {
        price: { input: before.inputPerMillion, output: before.outputPerMillion },
        caps: deps.spend?.caps ?? NO_SPEND_CAPS,
        windows,
      };
      const want = { prompt, output, minOutput };
      const granted = await store.reserveTokens(runId, requester, want, budgets, day, spend);
      const spent = (verdict: Limit, left?: number) => limitSentence(verdict, { budgets, spend, requester, left });
      if (!granted.ok) {
        const code = granted.refusedBy === 'run' || granted.refusedBy === 'user' ? 'limit_reached' : 'spend_capped';
        throw new StewardError(code, spent(granted.refusedBy, granted.leftMicroUsd));
      }
      const reserved = prompt + granted.cap;
      const reservedMicroUsd = granted.spendMicroUsd ?? 0;
      const settle = { runId, actor: requester, day };
      let response: LlmResponse;
      const startedAt = clock();
      const abortedBefore = request.signal?.aborted === true;
      try {
        const { onSent, ...sent } = request;
        const call = deps.llm.complete({ ...sent, maxOutputTokens: granted.cap });
        onSent?.();
        response = await call;
      } catch (err) {
        const model = request.model ?? deps.spend?.roleModels?.[request.role]?.model ?? 'unknown';
        // A call cut short by its signal (Cancel, Stop, a planner call dropped because the front desk answered) was
        // sent, and its provider charges the prompt it read: it counts as read, never as free. A failed one is free.
        const read = request.signal?.aborted === true && !abortedBefore ? prompt : 0;
        const failed = { runId, role: request.role, model, inputTokens: read, outputTokens: 0, startedAt };
        deps.telemetry?.modelCalled({ ...failed, endedAt: clock(), error: (err as Error).message });
        const usage = { inputTokens: read, outputTokens: 0 };
        const prices = pricesFor(deps.prices ?? [], { model });
        const charged = read > 0 ? chargeMicroUsd(usage, prices, defaultPrice) : 0;
        await storeSettlement({
          ...settle,
          delta: read - reserved,
          usage:
            read > 0
              ? {
                  role: request.role,
                  model,
                  ...usage,
                  cachedInputTokens: 0,
                  costMicroUsd: prices ? costMicroUsd(usage, prices) : null,
                  chargedMicroUsd: charged,
                  at: clock(),
                }
              : null,
          spend: { delta: charged - reservedMicroUsd, windows },
        });
        throw err;
      }
      const { inputTokens, outputTokens } = response.usage;
      const answered = { runId, role: request.role, model: response.model, inputTokens, outputTokens, startedAt };
      deps.telemetry?.modelCalled({ ...answered, endedAt: clock() });
      const prices = pricesFor(deps.prices ?? [], response);
      const charged = chargeMicroUsd(response.usage, prices, defaultPrice);
      await storeSettlement({
        ...settle,
        delta: inputTokens + outputTokens - reserved,
        usage: {
          role: request.role,
          model: response.model,
          inputTokens,
          outputTokens,
          cachedInputTokens: response.usage.cachedInputTokens ?? 0,
          costMicroUsd: prices ? costMicroUsd(response.usage, prices) : null,
          chargedMicroUsd: charged,
          at: clock(),
        },
        spend: { delta: charged - reservedMicroUsd, windows },
      });
      // Cut short by the budget, not by its size: the budget is what the person must hear about.
      if (response.truncated && granted.limitedBy) {
        const code = granted.limitedBy === 'run' || granted.limitedBy === 'user' ? 'limit_reached' : 'spend_capped';
        throw new StewardError(
          code,
          `${spent(granted.limitedBy)} (the answer was cut off at the ${granted.cap} tokens left)`,
        );
      }
      return response;
    },
  };
}

type Limit = Extract<GrantedCap, { ok: false }>['refusedBy'];

/** The budget or spend cap that stopped a call, in words: `this channel's daily spend cap of $5.00 is used up`. */
function limitSentence(
  limit: Limit,
  o: {
    budgets: { perRun: number; perUserPerDay: number };
    spend: { caps: SpendSettings['caps'] };
    requester: Actor;
    left?: number;
  },
): string {
  const person = o.requester.name ?? o.requester.id;
  if (limit === 'run') return `this run has used its budget of ${o.budgets.perRun} model tokens`;
  if (limit === 'user') return `${person} has used today's budget of ${o.budgets.perUserPerDay} model tokens`;
  const [scope, period] = limit.split('-') as [SpendScope, SpendPeriod];
  const cap = o.spend.caps[scope][period] ?? 0;
  const left = o.left === undefined ? '' : ` (${formatUsd(o.left)} left)`;
  return `${capWords(scope, period, cap, person)} is used up${left}`;
}

/** The cap a call asks for before the budgets have their say: its role's setting, or less if the request asks less. */
export function outputCapFor(
  request: Pick<LlmRequest, 'role' | 'maxOutputTokens'>,
  perCall?: Partial<Record<ModelRole, number>>,
): number {
  const roleCap = perCall?.[request.role] ?? DEFAULT_OUTPUT_CAPS[request.role];
  return Math.max(1, Math.min(roleCap, request.maxOutputTokens ?? roleCap));
}

/** The one role that may be offered tools: the quick-answer loop's. */
export const TOOL_ROLE: ModelRole = 'butler';

/**
 * Tools go to the model only with the `butler` role: any other request that carries some is refused before anything
 * is sent (a mistake in Steward, never something a model or a person can cause).
 */
export function assertToolsAllowed(request: Pick<LlmRequest, 'role' | 'tools'>): void {
  if (request.tools && request.tools.length > 0 && request.role !== TOOL_ROLE) {
    throw new StewardError('internal', `tools may only be offered to the ${TOOL_ROLE} role, not to ${request.role}`);
  }
}

/** A generous guess at the prompt before the call: about four characters a token (tools and tool calls included). */
function promptEstimate(request: LlmRequest): number {
  const calls = (m: LlmRequest['messages'][number]) => ('toolCalls' in m ? JSON.stringify(m.toolCalls).length : 0);
  const tools = request.tools ? JSON.stringify(request.tools).length : 0;
  const chars = request.system.length + tools + request.messages.reduce((n, m) => n + m.content.length + calls(m), 0);
  // An image costs up to about 1,600 tokens on either provider once scaled (dropped ones too: a generous guess).
  const images = request.messages.reduce((n, m) => n + ('images' in m ? (m.images?.length ?? 0) : 0), 0);
  return Math.ceil(chars / 4) + images * 1_600;
}

/**
 * The first call's settlement held for the write that follows it at once, which carries it (`take`); any later call,
 * or one that comes after the write, settles by a statement of its own, and so does a held one that no write took
 * (`flush`). A kill between the call and the write leaves its reservation standing, as a kill during the call does:
 * counted, never overshot.
 */
export class HeldSettlement {
  private held: (TokenSettlement & { op: string }) | undefined;
  private closed = false;

  constructor(
    private readonly store: Pick<Ledgers, 'settleTokens'>,
    private readonly newId: () => string,
  ) {}

  readonly settle = async (s: TokenSettlement): Promise<void> => {
    if (this.held || this.closed) return this.store.settleTokens(s);
    this.held = { ...s, op: this.newId() };
  };

  /** The held settlement for the write that carries it; from now on every call settles on its own. */
  take(): (TokenSettlement & { op: string }) | undefined {
    const held = this.held;
    this.held = undefined;
    this.closed = true;
    return held;
  }

  /** Stores a held settlement no write took. */
  async flush(): Promise<void> {
    const held = this.take();
    if (held) await this.store.settleTokens(held);
  }
}

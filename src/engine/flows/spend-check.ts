/**
 * Spend caps at review: what a card says about spend (read from the totals when any cap is set), and whether an
 * Approve may start a run that would pass a cap: only an approver's, which exempts that run from the caps (its token
 * budget still bounds it). The caps themselves are judged on every model call by the store (`meteredLlm`).
 */
import type { PlanEstimate } from '../estimate-history.ts';
import type { StoredRun } from '../ports.ts';
import { isApprover } from '../run/run-actions.ts';
import {
  anyCap,
  capWords,
  formatUsd,
  leftMicroUsd,
  spendOutlook,
  spendWindows,
  withCaps,
  type SpendLedger,
  type SpendOutlook,
} from '../spend.ts';
import type { Actor } from '../types.ts';
import type { Log, StewardSettings } from './deps.ts';

/** What the check reads: the totals, the clock, the log, and the caps and approvers from the settings. */
export interface SpendCheckDeps {
  store: SpendLedger;
  clock: () => Date;
  log: Log;
  settings: Pick<StewardSettings, 'spend' | 'approvers'>;
}

/**
 * The card's spend outlook for a run: undefined when no cap is set, or when the totals cannot be read (a card is
 * never held up for it; every call is still judged against the caps).
 */
export async function spendOutlookFor(
  deps: SpendCheckDeps,
  run: Pick<StoredRun, 'id' | 'requester'>,
  estimate: PlanEstimate | undefined,
): Promise<SpendOutlook | undefined> {
  const caps = deps.settings.spend?.caps;
  if (!caps || !anyCap(caps)) return undefined;
  try {
    const spent = await deps.store.runSpend(run.id, run.requester, spendWindows(deps.clock()));
    return spendOutlook(estimate?.spendMicroUsd ?? null, withCaps(spent.totals, caps), spent.exempt) ?? undefined;
  } catch (err) {
    deps.log('warn', `run ${run.id}: spend totals could not be read (${(err as Error).message}); the card shows none`);
    return undefined;
  }
}

/**
 * Whether this Approve may start a run with this outlook: a run over a cap only by an approver (then `exempt`);
 * otherwise the refusal, naming the cap, what the run would spend and what is left.
 */
export function spendApproval(
  outlook: SpendOutlook | undefined,
  actor: Actor,
  settings: SpendCheckDeps['settings'],
  requester: Actor,
): { ok: true; exempt: boolean; cap?: string } | { ok: false; refusal: string } {
  const over = outlook?.over;
  if (!over || over.capMicroUsd === null) return { ok: true, exempt: false };
  const cap = capWords(over.scope, over.period, over.capMicroUsd, requester.name ?? requester.id);
  if (isApprover(actor, settings.approvers ?? [])) return { ok: true, exempt: true, cap };
  const would = outlook.wouldSpendMicroUsd ? `up to ${formatUsd(outlook.wouldSpendMicroUsd.high)}` : 'more';
  const left = formatUsd(leftMicroUsd(over) ?? 0);
  return {
    ok: false,
    refusal: `This run would spend ${would}, more than the ${left} left of ${cap}: only an approver can approve it.`,
  };
}

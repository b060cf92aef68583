/**
 * An Assistant's grants where plans are checked and tools are called: the tools as a run of an Assistant sees them
 * (each tool it is not granted marked not allowed, with the reason), and the check made again before each call, read
 * from the database at that moment, so a grant revoked after approval stops the next call.
 *
 * Delegation narrows, never widens: a run one Assistant delegated to another is bound by the grants of every
 * Assistant up its chain of parents as well as its own (the intersection), so an Assistant that may delegate cannot
 * reach, through another, a tool it is not granted itself; unless an approver widened, on the parent's card, the
 * grants of the runs it hands out (`brake-raise.ts`).
 */
import { DEPTH_CEILING, type DelegationStore } from '../assistant/delegations.ts';
import { applyGrants, grantRefusal, type AssistantStore } from '../assistant/assistants.ts';
import type { LlmClient, RunRecords, StoredRun, ToolRunner } from '../ports.ts';
import type { ToolInfo } from '../types.ts';

/** What the grant checks read. */
export interface GrantDeps {
  tools: ToolRunner;
  assistants?: AssistantStore;
  /** Where a run's parents are read, to find the Assistants up its chain (without it, only its own Assistant). */
  store?: Pick<RunRecords, 'getRun'>;
  /** Where an approver's Widen grants on a parent's card is read: the chain stops there. */
  delegations?: Pick<DelegationStore, 'grantsWidened'>;
}

/** The run fields the chain is found from. */
export type GrantedRun = Pick<StoredRun, 'assistant' | 'parentRunId'>;

/**
 * The Assistants whose grants bound a run, by name: its own, then each Assistant up its chain of parents (a parent
 * of Steward's own adds none), each once. Empty for Steward's own runs.
 */
export async function grantChain(deps: Pick<GrantDeps, 'store' | 'delegations'>, run: GrantedRun): Promise<string[]> {
  if (!run.assistant) return [];
  const names = [run.assistant];
  let parentId = run.parentRunId;
  // A chain is never longer than the depth ceiling; the bound also ends a loop a damaged row could make.
  for (let hops = 0; parentId && deps.store && hops <= DEPTH_CEILING; hops++) {
    // An approver widened, on that parent's card, the grants of the runs it hands out: nothing above narrows them.
    if (await deps.delegations?.grantsWidened(parentId)) break;
    const parent = await deps.store.getRun(parentId);
    if (!parent) break;
    if (parent.assistant && !names.includes(parent.assistant)) names.push(parent.assistant);
    parentId = parent.parentRunId;
  }
  return names;
}

/** The tools connected now, as the run's Assistants may use them (all of them, unchanged, for Steward's own runs). */
export async function toolsForRun(deps: GrantDeps, run: GrantedRun): Promise<ToolInfo[]> {
  return narrowTools(deps, deps.tools.listTools(), await grantChain(deps, run));
}

/** `tools` with each one that an Assistant of `chain` is not granted marked not allowed (the first refusal says why). */
export async function narrowTools(
  deps: Pick<GrantDeps, 'assistants'>,
  tools: readonly ToolInfo[],
  chain: readonly string[],
): Promise<ToolInfo[]> {
  let narrowed = [...tools];
  for (const name of chain) {
    const assistant = (await deps.assistants?.getAssistant(name)) ?? null;
    narrowed = applyGrants(narrowed, name, assistant).map((t, i) =>
      // A tool an earlier Assistant of the chain refused keeps that reason.
      narrowed[i]?.policy.allowed === false ? narrowed[i] : t,
    );
  }
  return narrowed;
}

/**
 * The check before a call of a run's Assistant: null when the call may go, else why not (the tool's name first).
 * Every Assistant up the run's chain must grant the tool. Undefined for Steward's own runs, which have nothing to
 * check.
 */
export function grantCheckFor(
  deps: GrantDeps,
  run: GrantedRun,
): ((tool: string) => Promise<string | null>) | undefined {
  if (!run.assistant) return undefined;
  return async (tool) => {
    for (const name of await grantChain(deps, run)) {
      const assistant = (await deps.assistants?.getAssistant(name)) ?? null;
      const refusal = grantRefusal(name, assistant, tool);
      if (refusal !== null) {
        const via = name === run.assistant ? '' : ` (${name} delegated this work, and delegation never widens)`;
        return `${tool} ${refusal}${via}; the call was not made`;
      }
    }
    return null;
  };
}

/**
 * A run's model client as its Assistant sets it up: a role the Assistant names a model for (a catalog name, see
 * `assistant <name> model <role> <model>`) is sent to that model, read once per client; a request that names a model
 * already, or a role the Assistant leaves alone, goes as it is. An Assistant that cannot be read changes nothing.
 */
export function withAssistantModels(
  llm: LlmClient,
  assistants: Pick<AssistantStore, 'getAssistant'>,
  name: string,
): LlmClient {
  let models: Promise<Record<string, string>> | undefined;
  return {
    async complete(request) {
      if (request.model !== undefined) return llm.complete(request);
      models ??= assistants.getAssistant(name).then(
        (a) => a?.models ?? {},
        () => ({}),
      );
      const model = (await models)[request.role];
      return llm.complete(model ? { ...request, model } : request);
    },
  };
}

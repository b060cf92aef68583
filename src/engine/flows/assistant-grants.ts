/**
 * An Assistant's grants where plans are checked and tools are called: the tools as a run of an Assistant sees them
 * (each tool it is not granted marked not allowed, with the reason), and the check made again before each call, read
 * from the database at that moment, so a grant revoked after approval stops the next call.
 */
import { applyGrants, grantRefusal, type AssistantStore } from '../assistant/assistants.ts';
import type { LlmClient, StoredRun, ToolRunner } from '../ports.ts';
import type { ToolInfo } from '../types.ts';

/** What the grant checks read. */
export interface GrantDeps {
  tools: ToolRunner;
  assistants?: AssistantStore;
}

/** The tools connected now, as the run's Assistant may use them (all of them, unchanged, for Steward's own runs). */
export async function toolsForRun(deps: GrantDeps, run: Pick<StoredRun, 'assistant'>): Promise<ToolInfo[]> {
  const all = deps.tools.listTools();
  if (!run.assistant) return all;
  const assistant = (await deps.assistants?.getAssistant(run.assistant)) ?? null;
  return applyGrants(all, run.assistant, assistant);
}

/**
 * The check before a call of a run's Assistant: null when the call may go, else why not (the tool's name first).
 * Undefined for Steward's own runs, which have nothing to check.
 */
export function grantCheckFor(
  deps: GrantDeps,
  run: Pick<StoredRun, 'assistant'>,
): ((tool: string) => Promise<string | null>) | undefined {
  const name = run.assistant;
  if (!name) return undefined;
  return async (tool) => {
    const assistant = (await deps.assistants?.getAssistant(name)) ?? null;
    const refusal = grantRefusal(name, assistant, tool);
    return refusal === null ? null : `${tool} ${refusal}; the call was not made`;
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

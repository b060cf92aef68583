/**
 * `prompts` and `prompt <server>/<name> …`: the MCP servers' prompts listed for a person, and one filled in by its server
 * as the text of a request the channel then starts (as the person's, through the normal front desk and planner).
 */
import { info, refusal, type CommandAnswer, type PromptStart } from '../channel.ts';
import type { ServerPrompts } from '../ports.ts';
import { parsePromptChoice, promptChoiceProblem, promptListText, promptRequest } from '../server-prompts.ts';
import type { Actor } from '../types.ts';

/** How long listing or filling in prompts may take, all servers together. */
const PROMPT_MS = 20_000;

const NONE = 'MCP server prompts are not offered in this Steward.';

/** The prompts `person` may start from, in words. */
export async function listPrompts(prompts: ServerPrompts | undefined, person: Actor): Promise<CommandAnswer> {
  if (!prompts) return refusal(NONE);
  const listed = await prompts.listPrompts(person, { signal: AbortSignal.timeout(PROMPT_MS), timeoutMs: PROMPT_MS });
  return info(promptListText(listed));
}

/**
 * The request a `prompt …` line starts: checked against the server's list (the prompt exists, its required arguments
 * are given, no others), then filled in by the server (`prompts/get`) on the session `person` may use.
 */
export async function choosePrompt(
  prompts: ServerPrompts | undefined,
  person: Actor,
  text: string,
): Promise<PromptStart> {
  if (!prompts) return { ok: false, answer: refusal(NONE) };
  const choice = parsePromptChoice(text);
  if (!choice.ok) return { ok: false, answer: refusal(choice.error) };
  const { server, name, args } = choice.value;
  const signal = AbortSignal.timeout(PROMPT_MS);
  const listed = await prompts.listPrompts(person, { signal, timeoutMs: PROMPT_MS });
  if (listed.unconnected.includes(server))
    return {
      ok: false,
      answer: refusal(`${server} runs with your own account: connect it first (connections connect ${server}).`),
    };
  const problem = promptChoiceProblem(choice.value, listed.prompts);
  if (problem) return { ok: false, answer: refusal(problem) };
  const got = await prompts.getPrompt(server, name, args, person, { signal, timeoutMs: PROMPT_MS });
  if (!got.ok) return { ok: false, answer: refusal(got.error) };
  const source = `${server}/${name}`;
  const request = promptRequest(got.value, source);
  return request.ok ? { ok: true, request: request.value, source } : { ok: false, answer: refusal(request.error) };
}

/**
 * MCP servers' prompts as starting points (pure): `prompts` lists them, `prompt <server>/<name> key=value …` fills one
 * in and starts a request with its text. Every word of a prompt (its name, description, arguments and the text it
 * fills in) is the server's, not the person's or Steward's: the list and the request say so where they show it.
 */
import type { ServerPrompt } from './ports.ts';
import type { Result } from './result.ts';

/** A `prompt` command read: which prompt, with which arguments. */
export interface PromptChoice {
  server: string;
  name: string;
  args: Record<string, string>;
}

/** The longest request a prompt may fill in; a longer one is refused (a request is read by a person first). */
export const PROMPT_REQUEST_CHARS = 8_000;
const LISTED = 40;

/**
 * Whether a line is a prompt command: `prompts`, or `prompt <server>/<name> …` (a line like "prompt me to call Bob" is
 * a request).
 */
export function isPromptCommand(text: string): boolean {
  return /^prompts\s*$/i.test(text.trim()) || /^prompt\s+[^\s/]+\/\S/i.test(text.trim());
}

/**
 * Reads `prompt <server>/<name> [key=value | key="a value" …]`; a sentence when it is not one. A value in double
 * quotes may hold spaces (and `\"`).
 */
export function parsePromptChoice(text: string): Result<PromptChoice> {
  const m = /^prompt\s+([^\s/]+)\/(\S+)(.*)$/is.exec(text.trim());
  if (!m) return { ok: false, error: 'Say which prompt: prompt <server>/<name> key=value … ("prompts" lists them).' };
  const args: Record<string, string> = {};
  const rest = m[3]!.trim();
  const pair = /([A-Za-z_][\w.-]*)=(?:"((?:[^"\\]|\\.)*)"|(\S*))\s*/gy;
  let at = 0;
  while (at < rest.length) {
    pair.lastIndex = at;
    const p = pair.exec(rest);
    if (!p)
      return {
        ok: false,
        error: `Arguments are key=value (a value with spaces in "quotes"); not: ${rest.slice(at, at + 40)}`,
      };
    args[p[1]!] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
    at = pair.lastIndex;
  }
  return { ok: true, value: { server: m[1]!, name: m[2]!, args } };
}

/** Why a choice cannot be filled in as given (an unknown prompt, a required argument left out), or null. */
export function promptChoiceProblem(choice: PromptChoice, prompts: readonly ServerPrompt[]): string | null {
  const found = prompts.find((p) => p.server === choice.server && p.name === choice.name);
  if (!found) {
    const theirs = prompts.filter((p) => p.server === choice.server).map((p) => p.name);
    const known = theirs.length > 0 ? ` It offers: ${theirs.join(', ')}.` : ' "prompts" lists the prompts there are.';
    return `MCP server "${choice.server}" offers no prompt "${choice.name}".${known}`;
  }
  const missing = found.arguments.filter((a) => a.required && !(a.name in choice.args)).map((a) => a.name);
  if (missing.length > 0)
    return `The prompt ${choice.server}/${choice.name} needs ${missing.map((n) => `${n}=…`).join(' ')}.`;
  const unknown = Object.keys(choice.args).filter((k) => !found.arguments.some((a) => a.name === k));
  if (unknown.length > 0) return `The prompt ${choice.server}/${choice.name} takes no ${unknown.join(', ')}.`;
  return null;
}

/** The list `prompts` answers with: each prompt with its arguments, the servers' words marked as theirs. */
export function promptListText(listed: {
  prompts: readonly ServerPrompt[];
  unconnected: readonly string[];
  problems: readonly string[];
}): string {
  const lines: string[] = [];
  if (listed.prompts.length === 0) lines.push('No MCP server here offers prompts.');
  else {
    lines.push(
      "Prompts the MCP servers offer as starting points (names and descriptions are the servers' words, not Steward's):",
    );
    for (const p of listed.prompts.slice(0, LISTED)) {
      const args = p.arguments.map((a) => (a.required ? `${a.name}=…` : `[${a.name}=…]`)).join(' ');
      lines.push(`• ${p.server}/${p.name}${args ? ` ${args}` : ''}${p.description ? `: ${p.description}` : ''}`);
      for (const a of p.arguments.filter((x) => x.description)) lines.push(`    ${a.name}: ${a.description}`);
    }
    if (listed.prompts.length > LISTED) lines.push(`(${listed.prompts.length - LISTED} more not shown)`);
    lines.push(
      "Start from one with: prompt <server>/<name> key=value …; its text (the server's words) becomes your request, and its plan is reviewed as any other.",
    );
  }
  for (const s of listed.unconnected)
    lines.push(`${s} runs with your own account: connect it to see its prompts (connections connect ${s}).`);
  lines.push(...listed.problems);
  return lines.join('\n');
}

/** The request a prompt's text parts make, or why none (no text, or too long to be read first). */
export function promptRequest(parts: readonly string[], source: string): Result<string> {
  const request = parts
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join('\n\n');
  if (request === '') return { ok: false, error: `The prompt ${source} gave no text to start from.` };
  if (request.length > PROMPT_REQUEST_CHARS)
    return {
      ok: false,
      error: `The prompt ${source} gave ${request.length} characters; at most ${PROMPT_REQUEST_CHARS} start a request.`,
    };
  return { ok: true, value: request };
}

/** The words a channel shows with a request started from a prompt, before its text. */
export function promptSourceNote(source: string): string {
  return `Started from the prompt ${source}: the text below is that MCP server's words, not yours or Steward's; the plan made from it is reviewed as any other.`;
}

/**
 * MCP prompts (`prompts/list`, `prompts/get`) on one session: what a server offers as starting points, and one prompt
 * filled in as the text parts of its messages (images, audio and embedded resources are left out: a request is text).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ServerPrompt } from '../engine/ports.ts';

// Shown to a person in a list: a name or description longer than this is cut.
const NAME_CHARS = 100;
const DESCRIPTION_CHARS = 300;
/** Most prompts kept per server (the first page's). */
const KEPT_PROMPTS = 25;

/** The first page of the server's prompts, or undefined when it declares no prompts capability; throws on failure. */
export async function listPromptsOn(
  client: Client,
  server: string,
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<ServerPrompt[] | undefined> {
  if (!client.getServerCapabilities()?.prompts) return undefined;
  const listed = await client.listPrompts(undefined, { signal: options.signal, timeout: options.timeoutMs });
  return listed.prompts.slice(0, KEPT_PROMPTS).map((p) => ({
    server,
    name: oneLine(p.name, NAME_CHARS),
    ...((p.description ?? p.title) && { description: oneLine(p.description ?? p.title ?? '', DESCRIPTION_CHARS) }),
    arguments: (p.arguments ?? []).map((a) => ({
      name: oneLine(a.name, NAME_CHARS),
      ...(a.description && { description: oneLine(a.description, DESCRIPTION_CHARS) }),
      required: a.required === true,
    })),
  }));
}

/** One prompt filled in: the text of each message's text part, in order; throws on failure. */
export async function getPromptOn(
  client: Client,
  name: string,
  args: Record<string, string>,
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<string[]> {
  const got = await client.getPrompt({ name, arguments: args }, { signal: options.signal, timeout: options.timeoutMs });
  return got.messages.flatMap((m) => (m.content.type === 'text' ? [m.content.text] : []));
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

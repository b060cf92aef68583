/**
 * The host's side of MCP prompts: the servers' prompts listed for one person (a server that connects per person on
 * their own session only), and one prompt filled in on the session its person may use. Never throws.
 */
import type { ServerPrompt } from '../engine/ports.ts';
import type { Result } from '../engine/result.ts';
import type { Actor } from '../engine/types.ts';
import { describeError } from './call-errors.ts';
import { personOwner } from './connection-store.ts';
import type { McpConnection } from './mcp-connection.ts';
import type { PersonSessions } from './person-sessions.ts';
import { getPromptOn, listPromptsOn } from './server-prompts.ts';

type Options = { signal: AbortSignal; timeoutMs: number };
type Client = NonNullable<McpConnection['client']>;

/** Runs `use` on the client `person` may use for `server` now: the shared one, or their own session. */
async function withClient<T>(
  server: { conn?: McpConnection; pool?: PersonSessions },
  person: Actor,
  use: (client: Client) => Promise<T>,
): Promise<{ kind: 'done'; value: T } | { kind: 'connect' } | { kind: 'down'; why: string }> {
  if (server.conn) {
    const client = server.conn.client;
    if (!client) return { kind: 'down', why: server.conn.goneReason ?? 'it is not connected' };
    return { kind: 'done', value: await use(client) };
  }
  if (!server.pool) return { kind: 'down', why: 'it is not configured' };
  const found = await server.pool.session(personOwner(person));
  if (found.kind === 'connect') return { kind: 'connect' };
  if (found.kind === 'failed') return { kind: 'down', why: found.message };
  try {
    const client = found.connection.client;
    if (!client) return { kind: 'down', why: 'its session closed' };
    return { kind: 'done', value: await use(client) };
  } finally {
    found.release();
  }
}

/** Every allowed server's prompts for `person`, asked in parallel. */
export async function listPromptsFor(
  connections: Iterable<McpConnection>,
  personal: Iterable<PersonSessions>,
  person: Actor,
  options: Options,
): Promise<{ prompts: ServerPrompt[]; unconnected: string[]; problems: string[] }> {
  const servers = [
    ...[...connections].map((conn) => ({ name: conn.config.name, allowed: conn.config.allowed, conn })),
    ...[...personal].map((pool) => ({ name: pool.config.name, allowed: pool.config.allowed, pool })),
  ].filter((s) => s.allowed);
  const prompts: ServerPrompt[] = [];
  const unconnected: string[] = [];
  const problems: string[] = [];
  const listed = await Promise.all(
    servers.map(async (s) => {
      try {
        return { s, got: await withClient(s, person, (client) => listPromptsOn(client, s.name, options)) };
      } catch (err) {
        return { s, failed: describeError(err) };
      }
    }),
  );
  for (const { s, got, failed } of listed) {
    if (failed !== undefined) problems.push(`MCP server "${s.name}" did not list its prompts: ${cut(failed)}`);
    else if (got?.kind === 'connect') unconnected.push(s.name);
    else if (got?.kind === 'down') problems.push(`MCP server "${s.name}" is unavailable: ${cut(got.why)}`);
    else if (got?.kind === 'done') prompts.push(...(got.value ?? []));
  }
  return { prompts, unconnected, problems };
}

/** One prompt filled in on the session `person` may use for its server: its text parts, or why not. */
export async function getPromptFor(
  server: { name: string; conn?: McpConnection; pool?: PersonSessions },
  prompt: string,
  args: Record<string, string>,
  person: Actor,
  options: Options,
): Promise<Result<string[], string>> {
  const config = server.conn?.config ?? server.pool?.config;
  if (!config?.allowed) return { ok: false, error: `There is no MCP server "${server.name}" here to ask.` };
  try {
    const got = await withClient(server, person, (client) => getPromptOn(client, prompt, args, options));
    if (got.kind === 'done') return { ok: true, value: got.value };
    if (got.kind === 'connect')
      return {
        ok: false,
        error: `MCP server "${server.name}" runs with your own account, and you have not connected it: connections connect ${server.name}`,
      };
    return { ok: false, error: `MCP server "${server.name}" is unavailable: ${cut(got.why)}` };
  } catch (err) {
    return { ok: false, error: `MCP server "${server.name}" did not give the prompt: ${cut(describeError(err))}` };
  }
}

function cut(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

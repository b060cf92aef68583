/**
 * MCP resources: what a server lists (a few resources and URI templates, for the planner) and one read's contents as
 * a tool output (embedded resource blocks, text and blobs kept), so a plan can follow a `resource_link`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceListing } from '../engine/ports.ts';
import type { Json, ToolOutput } from '../engine/types.ts';
import { followSignal } from './abort-fanout.ts';

// Kept per server: the planner is shown fewer (resource-tool.ts); one page each is enough to say what is there.
const KEPT_RESOURCES = 20;
const KEPT_TEMPLATES = 10;
const TEXT_CHARS = 300;

/**
 * The first page of a server's resources and templates, when it declares the resources capability (undefined when it
 * does not). A server that lists no templates (or refuses the request) has none; a failed resource listing throws.
 */
export async function listResourceCatalog(
  client: Client,
  server: string,
  options: RequestOptions,
): Promise<ResourceListing | undefined> {
  if (!client.getServerCapabilities()?.resources) return undefined;
  const listed = await withOwnSignal(options, (o) => client.listResources(undefined, o));
  const templates = await withOwnSignal(options, (o) => client.listResourceTemplates(undefined, o)).catch(() => ({
    resourceTemplates: [],
    nextCursor: undefined,
  }));
  const more =
    listed.resources.length > KEPT_RESOURCES ||
    templates.resourceTemplates.length > KEPT_TEMPLATES ||
    listed.nextCursor !== undefined ||
    templates.nextCursor !== undefined;
  return {
    server,
    resources: listed.resources.slice(0, KEPT_RESOURCES).map((r) => ({
      uri: oneLine(r.uri),
      name: oneLine(r.title ?? r.name),
      ...(r.mimeType ? { mimeType: oneLine(r.mimeType) } : {}),
    })),
    templates: templates.resourceTemplates.slice(0, KEPT_TEMPLATES).map((t) => ({
      uriTemplate: oneLine(t.uriTemplate),
      name: oneLine(t.title ?? t.name),
    })),
    more,
  };
}

/** A read's contents as a tool output: one embedded resource block per part, as a tool would return them. */
export function toResourceOutput(result: ReadResourceResult): ToolOutput {
  const content = result.contents.map((c) => ({ type: 'resource', resource: c }) as unknown as Json);
  return { content };
}

/** A request with a signal of its own, released after: the SDK never drops its abort listener (tool-listing.ts). */
async function withOwnSignal<T>(options: RequestOptions, send: (o: RequestOptions) => Promise<T>): Promise<T> {
  const own = options.signal ? followSignal(options.signal) : undefined;
  try {
    return await send(own ? { ...options, signal: own.signal } : options);
  } finally {
    own?.release();
  }
}

/** A server's words on one line, capped: they reach a prompt. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > TEXT_CHARS ? `${flat.slice(0, TEXT_CHARS)}…` : flat;
}

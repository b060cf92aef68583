/**
 * Reads a server's whole tool list (every page) and keeps the tools a plain tools/call can run.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { followSignal } from './abort-fanout.ts';

// A server that keeps handing out cursors is broken; stop rather than loop forever.
const MAX_TOOL_PAGES = 100;

/**
 * Every tool the server lists, following `nextCursor` to the last page. `options.signal` reaches a page's request
 * only while it waits for its answer: the SDK never drops its abort listener, and a signal passed straight through
 * (a run's stop signal) would send `notifications/cancelled` for a listing answered long before.
 */
export async function listAllTools(client: Client, options: RequestOptions): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const own = options.signal ? followSignal(options.signal) : undefined;
    const params = cursor === undefined ? undefined : { cursor };
    let result;
    try {
      result = await client.listTools(params, own ? { ...options, signal: own.signal } : options);
    } finally {
      own?.release();
    }
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** Splits off tools that demand task-based execution: a plain tools/call is refused for them. */
export function callableTools(tools: Tool[]): { callable: Tool[]; taskOnly: string[] } {
  const taskOnly = tools.filter((t) => t.execution?.taskSupport === 'required');
  return { callable: tools.filter((t) => !taskOnly.includes(t)), taskOnly: taskOnly.map((t) => t.name) };
}

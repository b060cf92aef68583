// A stdio MCP server whose answers are written to attack a terminal: `page` reports it as its progress message, then
// returns it as a tool output, and `broken` as a tool error. The text comes from the server, never from the plan, as an attacker's page or file would.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, EmptyResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const text = process.env.HOSTILE_TEXT ?? '';
const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
const tools = [
  { name: 'page', description: 'Reads a web page.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'broken', description: 'Reads another web page.', inputSchema: { type: 'object' }, annotations: readOnly },
];

const server = new Server({ name: 'terminal-text-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  // `page` reports progress in the same words before it answers, as a hostile server's progress message would.
  const progressToken = request.params._meta?.progressToken;
  if (request.params.name === 'page' && progressToken !== undefined) {
    await extra.sendNotification({
      method: 'notifications/progress',
      params: { progressToken, progress: 1, total: 1, message: text },
    });
    // A client handles notifications a turn later than responses: a ping answered means the report was read first.
    await extra.sendRequest({ method: 'ping' }, EmptyResultSchema);
  }
  return { content: [{ type: 'text', text }], ...(request.params.name === 'broken' ? { isError: true } : {}) };
});
await server.connect(new StdioServerTransport());

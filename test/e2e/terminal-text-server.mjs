// A stdio MCP server whose answers are written to attack a terminal: `page` returns its text as a tool output and
// `broken` as a tool error. The text comes from the server, never from the plan, as an attacker's page or file would.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const text = process.env.HOSTILE_TEXT ?? '';
const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
const tools = [
  { name: 'page', description: 'Reads a web page.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'broken', description: 'Reads another web page.', inputSchema: { type: 'object' }, annotations: readOnly },
];

const server = new Server({ name: 'terminal-text-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: 'text', text }],
  ...(request.params.name === 'broken' ? { isError: true } : {}),
}));
await server.connect(new StdioServerTransport());

/**
 * The bare MCP SDK client the conformance suite's results for Steward are compared with: the SDK's `Client` over
 * its Streamable HTTP transport as its README shows it, with no OAuth and nothing of Steward's. It does what
 * steward-client.ts does (connect, list tools, call each once) and, like any SDK client that opts in, answers
 * elicitation requests by accepting with the schema's defaults (the SDK fills them in).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOOL_ARGUMENTS: Record<string, Record<string, number>> = { add_numbers: { a: 5, b: 3 } };

async function main(): Promise<number> {
  const url = process.argv.at(-1);
  if (!url?.startsWith('http')) {
    process.stderr.write('usage: sdk-client.ts <server-url>\n');
    return 2;
  }
  const client = new Client(
    { name: 'sdk-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: {} }));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    for (const tool of tools) {
      await client.callTool({ name: tool.name, arguments: TOOL_ARGUMENTS[tool.name] ?? {} });
    }
    return 0;
  } catch (err) {
    process.stderr.write(`sdk-client: ${String(err)}\n`);
    return 1;
  } finally {
    await client.close();
  }
}

process.exitCode = await main();

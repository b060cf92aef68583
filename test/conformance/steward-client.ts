/**
 * The client the MCP conformance suite (`@modelcontextprotocol/conformance`) drives, built on Steward's own
 * `McpHost`: the server URL arrives as the last argument and the scenario in MCP_CONFORMANCE_SCENARIO. The config
 * goes through `parseMcpConfig` as an operator's mcp.json would, and every call goes through the host, with its
 * bounded fetch, reconnects and call slots in the path. Exits 0 when every listed tool answered, 1 otherwise.
 */
import { parseMcpConfig } from '../../src/mcp/mcp-config.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';

/** Arguments for the tools the suite's servers offer; any other tool is called with none. */
const TOOL_ARGUMENTS: Record<string, Record<string, number>> = { add_numbers: { a: 5, b: 3 } };
const SERVER = 'conformance';
const CALL_TIMEOUT_MS = 15_000;

async function main(): Promise<number> {
  const url = process.argv.at(-1);
  if (!url?.startsWith('http')) {
    process.stderr.write('usage: steward-client.ts <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)\n');
    return 2;
  }
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const mcpJson = JSON.stringify({ mcpServers: { [SERVER]: { url, ...authFor(scenario) } } });
  const config = parseMcpConfig(mcpJson, 'conformance mcp.json');
  const log = (level: string, message: string) => process.stderr.write(`[steward ${level}] ${message}\n`);
  const { host, failures } = await McpHost.connect(config, {
    logger: log,
    connectTimeoutMs: CALL_TIMEOUT_MS,
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
    oauthRedirectUrl: 'http://localhost:3000/callback',
    authorize: followConsent,
    // The person at the form: submits it as shown, so the fields they leave alone go back with the schema's defaults.
    questions: { ask: () => Promise.resolve({ action: 'accept', content: {} }) },
  });
  try {
    if (failures.length > 0) return 1;
    for (const tool of host.listTools()) {
      const signal = AbortSignal.timeout(CALL_TIMEOUT_MS);
      const outcome = await host.callTool(tool.name, TOOL_ARGUMENTS[tool.tool] ?? {}, {
        signal,
        timeoutMs: CALL_TIMEOUT_MS,
        runId: 'conformance',
        stepId: tool.tool,
      });
      if (!outcome.ok) {
        log('error', `${tool.name}: ${outcome.error.message}`);
        return 1;
      }
      log('info', `${tool.name} answered`);
    }
    return 0;
  } finally {
    await host.close();
  }
}

/**
 * The mcp.json `auth` lines an operator would write for the scenario's server: the workspace's connection, with the
 * pre-registered client the suite hands out in MCP_CONFORMANCE_CONTEXT, or a client ID metadata document.
 */
function authFor(scenario: string): Record<string, unknown> {
  if (!scenario.startsWith('auth/')) return {};
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
    client_id?: string;
    client_secret?: string;
    private_key_pem?: string;
    signing_algorithm?: string;
  };
  const client = context.client_id ? { clientId: context.client_id, clientSecret: context.client_secret } : {};
  if (scenario === 'auth/client-credentials-basic') {
    return { auth: 'workspace', oauth: { grant: 'client_credentials', ...client } };
  }
  if (scenario === 'auth/client-credentials-jwt') {
    const key = { privateKey: context.private_key_pem, algorithm: context.signing_algorithm ?? 'ES256' };
    return { auth: 'workspace', oauth: { grant: 'client_credentials', clientId: context.client_id, ...key } };
  }
  return { auth: 'workspace', oauth: { ...client, clientMetadataUrl: CLIENT_METADATA_URL } };
}

/** The URL the suite's authorization server accepts as a client ID metadata document (it fetches nothing). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/**
 * The person at the browser: the suite's authorization server consents at once and redirects with the code, so
 * following its answer to the redirect URL is what a click on "Allow" would do.
 */
async function followConsent({ url }: { url: URL }): Promise<string | undefined> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  return location ? (new URL(location).searchParams.get('code') ?? undefined) : undefined;
}

process.exitCode = await main();

/**
 * Servers' questions (MCP elicitation) through the host, against server-everything over stdio and Streamable HTTP:
 * the capability is declared only when questions are taken (the server offers its asking tool only then), a question
 * reaches the port with the step whose call is in flight and its answer reaches the server, and a question no one can
 * be sure is whose (no run's call in flight, or two runs' at once) is declined.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import type { McpServerConfig } from '../../src/mcp/mcp-config.ts';
import type { QuestionCall, QuestionRequest, ServerQuestions } from '../../src/engine/server-questions.ts';
import {
  everythingStdioConfig,
  httpServerConfig,
  mcpConfig,
  startEverythingHttp,
  type HttpTestServer,
} from '../helpers/mcp-servers.ts';

const TOOL = 'everything.trigger-elicitation-request';
let host: McpHost | undefined;
let http: HttpTestServer | undefined;
afterEach(async () => {
  await host?.close();
  await http?.close();
  host = undefined;
  http = undefined;
});

type Overrides = Record<string, unknown>;
const transports: [string, (overrides?: Overrides) => Promise<McpServerConfig>][] = [
  ['stdio', (overrides) => Promise.resolve(everythingStdioConfig({ overrides }))],
  [
    'Streamable HTTP',
    async (overrides) => {
      http = await startEverythingHttp();
      return httpServerConfig(http.url, { overrides });
    },
  ],
];

async function connect(config: McpServerConfig, questions?: ServerQuestions): Promise<McpHost> {
  const connected = await McpHost.connect(mcpConfig(config), { ...(questions && { questions }) });
  expect(connected.failures).toEqual([]);
  host = connected.host;
  return host;
}

const call = (h: McpHost, runId?: string) =>
  h.callTool(
    TOOL,
    {},
    { signal: new AbortController().signal, timeoutMs: 20_000, ...(runId && { runId, stepId: 'ask' }) },
  );

describe.each(transports)('servers’ questions over %s', (_name, configOf) => {
  it('without questions taken, no capability is declared and the server does not offer its asking tool', async () => {
    const h = await connect(await configOf());
    expect(h.listTools().map((t) => t.name)).not.toContain(TOOL);
  });

  it("a question reaches the port with the call's run and step, and the answer reaches the server", async () => {
    const asked: { call: QuestionCall; request: QuestionRequest }[] = [];
    const h = await connect(await configOf(), {
      ask: (c, request) => {
        asked.push({ call: c, request });
        return Promise.resolve({ action: 'accept', content: { name: 'Ada' } });
      },
    });
    expect(h.listTools().map((t) => t.name)).toContain(TOOL);
    const outcome = await call(h, 'r1');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.call).toMatchObject({ runId: 'r1', stepId: 'ask' });
    expect(asked[0]?.request).toMatchObject({
      server: 'everything',
      message: 'Please provide inputs for the following fields:',
    });
    expect(JSON.stringify(outcome)).toContain('Name: Ada');
  });

  it('is declined when no run is calling, or when two runs are calling the server at once', async () => {
    let asks = 0;
    // Two calls that may write go to one server at once only where its mcp.json entry allows it.
    const h = await connect(await configOf({ maxConcurrency: 2 }), {
      ask: () => {
        asks++;
        return Promise.resolve({ action: 'accept', content: { name: 'Ada' } });
      },
    });
    expect(JSON.stringify(await call(h))).toContain('User declined');
    // Run r1's call stays in flight for seconds while r2's call asks its question: two runs on the session at once.
    const long = h.callTool(
      'everything.trigger-long-running-operation',
      { duration: 3, steps: 3 },
      { signal: new AbortController().signal, timeoutMs: 20_000, runId: 'r1', stepId: 'wait' },
    );
    expect(JSON.stringify(await call(h, 'r2'))).toContain('User declined');
    expect((await long).ok).toBe(true);
    expect(asks).toBe(0);
  });

  it('with the default of one write at a time, two runs calling together are asked one after the other', async () => {
    const asked: string[] = [];
    const h = await connect(await configOf(), {
      ask: (c) => {
        asked.push(c.runId);
        return Promise.resolve({ action: 'accept', content: { name: c.runId } });
      },
    });
    const both = await Promise.all([call(h, 'r1'), call(h, 'r2')]);
    expect(asked.sort()).toEqual(['r1', 'r2']);
    expect(both.map((o) => JSON.stringify(o))).toEqual([
      expect.stringContaining('Name: r1'),
      expect.stringContaining('Name: r2'),
    ]);
  });
});

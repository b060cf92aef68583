/**
 * The bench's LangGraph peer: the agent a user would otherwise pick, as its docs build it. `createAgent` from
 * `langchain` with `ChatOpenAI` (Chat Completions, native tool calls) and the MCP servers' tools loaded through
 * `@langchain/mcp-adapters`, named `<server>__<tool>`. Loaded by bench/peer.ts with a dynamic import, so the root
 * project (its typecheck, lint and CI) never needs these packages; its types are checked with
 * `npx tsc -p bench/peer-langgraph` once they are installed.
 */
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, ToolMessage, createAgent, createMiddleware } from 'langchain';

/** One MCP server as the bench's world exposes it. */
export interface PeerServer {
  name: string;
  transport:
    | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
    | { kind: 'http'; url: string; headers: Record<string, string> };
}

/** What the bench gives the peer. */
export interface PeerOptions {
  baseURL: string;
  model: string;
  servers: PeerServer[];
  /** Tools Steward's planner may use, as `<server>.<tool>`: the peer gets the same ones. */
  allowedTools: string[];
  /** Each tool result is passed on no sooner than this many ms after its call started (the modelled tool time). */
  toolFloorMs: number;
  systemPrompt: string;
}

/** One request run to its answer. */
export interface PeerOutcome {
  answer: string | null;
  toolCalls: number;
  /** Tool call ids per model turn that asked for tools, in order. */
  callsPerTurn: string[][];
  error?: string;
}

/** A connected peer. */
export interface PeerAgent {
  /** How many tools the agent was given (their definitions go with every model call). */
  toolCount: number;
  run(request: string): Promise<PeerOutcome>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Connects to the servers and builds the agent. */
export async function createPeer(options: PeerOptions): Promise<PeerAgent> {
  const client = new MultiServerMCPClient({
    mcpServers: Object.fromEntries(
      options.servers.map((s) => [
        s.name,
        s.transport.kind === 'stdio'
          ? {
              transport: 'stdio' as const,
              command: s.transport.command,
              args: s.transport.args,
              env: s.transport.env,
              ...(s.transport.cwd ? { cwd: s.transport.cwd } : {}),
            }
          : { transport: 'http' as const, url: s.transport.url, headers: s.transport.headers },
      ]),
    ),
    prefixToolNameWithServerName: true,
    throwOnLoadError: true,
  });
  const allowed = new Set(options.allowedTools.map((t) => t.replace('.', '__')));
  const tools = (await client.getTools()).filter((t) => allowed.has(t.name));
  const floor = createMiddleware({
    name: 'BenchToolTime',
    wrapToolCall: async (request, handler) => {
      const started = performance.now();
      const result = await handler(request);
      await sleep(options.toolFloorMs - (performance.now() - started));
      return result;
    },
  });
  const agent = createAgent({
    model: new ChatOpenAI({
      model: options.model,
      apiKey: 'bench',
      configuration: { baseURL: options.baseURL },
      maxRetries: 2,
      streaming: false,
    }),
    tools,
    systemPrompt: options.systemPrompt,
    middleware: [floor],
  });
  return {
    toolCount: tools.length,
    run: async (request) => {
      try {
        const { messages } = await agent.invoke(
          { messages: [{ role: 'user', content: request }] },
          { recursionLimit: 100 },
        );
        const callsPerTurn = messages
          .filter((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0)
          .map((m) => (m as AIMessage).tool_calls?.map((c) => c.id ?? c.name) ?? []);
        const last = messages.at(-1);
        return {
          answer: last && AIMessage.isInstance(last) ? last.text : null,
          toolCalls: messages.filter((m) => ToolMessage.isInstance(m)).length,
          callsPerTurn,
        };
      } catch (err) {
        return {
          answer: null,
          toolCalls: 0,
          callsPerTurn: [],
          error: err instanceof Error ? err.message : String(err),
        };
      }
    },
    close: () => client.close(),
  };
}

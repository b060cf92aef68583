/**
 * Everything the ReAct comparison runs against, started once: the generated file tree, the fake LLM process, real
 * MCP servers (server-everything over stdio as `everything` and over Streamable HTTP as `web`, server-filesystem as
 * `fs`, the audit fixture as `audit`), and a fresh migrated PostgreSQL database.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LlmClient } from '../src/engine/ports.ts';
import { createLlmClient } from '../src/llm/model-router.ts';
import type { McpServerConfig } from '../src/mcp/mcp-config.ts';
import { McpHost } from '../src/mcp/mcp-host.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/databases.ts';
import {
  auditStdioConfig,
  everythingStdioConfig,
  filesystemStdioConfig,
  httpServerConfig,
  mcpConfig,
  startEverythingHttp,
} from '../test/helpers/mcp-servers.ts';
import { startFakeLlmProcess, type FakeLlmConfig, type FakeLlmProcess } from './fake-llm-handle.ts';
import { createFsTree, type GeneratedFile } from './fs-tree.ts';
import { createTasks, type BenchTask } from './tasks.ts';

/** The running world; `close` stops all of it. */
export interface World {
  tasks: BenchTask[];
  files: GeneratedFile[];
  host: McpHost;
  /** The servers' configs (stdio commands, the HTTP URL), for a peer that connects on its own. */
  servers: McpServerConfig[];
  db: TestDatabase;
  fake: FakeLlmProcess;
  fakeConfig: FakeLlmConfig;
  /** Steward's LLM layer pointed at the fake (one OpenAI-compatible client for every role). */
  llm: LlmClient;
  close(): Promise<void>;
}

/** Starts the world for a scale and seed. */
export async function openWorld(options: { scale: number; seed: number }): Promise<World> {
  const tree = createFsTree(4, options.seed);
  const fakeConfig: FakeLlmConfig = { scale: options.scale, seed: options.seed, files: tree.files };
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(tree.root, { recursive: true, force: true })];
  const close = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    const fake = await startFakeLlmProcess(fakeConfig);
    cleanups.push(() => fake.close());
    const http = await startEverythingHttp();
    cleanups.push(() => http.close());
    const servers = [
      everythingStdioConfig({ name: 'everything' }),
      httpServerConfig(http.url, { name: 'web' }),
      filesystemStdioConfig(tree.root, { name: 'fs' }),
      auditStdioConfig(join(tree.root, 'audit.jsonl'), { name: 'audit' }),
    ];
    const { host, failures } = await McpHost.connect(mcpConfig(...servers));
    cleanups.push(() => host.close());
    if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
    const db = await createTestDatabase('postgres');
    cleanups.push(() => db.close());
    const model = 'bench-model';
    // Steward's defaults for the SDK: 2 retries (so a 429 with Retry-After is waited out), a per-attempt timeout.
    const llm = createLlmClient({
      openai: { apiKey: 'bench', baseURL: fake.baseURL, maxRetries: 2, timeoutMs: 120_000 },
      models: { planner: model, classifier: model, synthesizer: model, llm_step: model },
    });
    const tasks = createTasks(options.scale, tree.files);
    return { tasks, files: tree.files, host, servers, db, fake, fakeConfig, llm, close };
  } catch (err) {
    await close();
    throw err;
  }
}

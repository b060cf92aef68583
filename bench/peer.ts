/**
 * Loads the LangGraph peer (bench/peer-langgraph) for the bench. Its packages live in that folder's own
 * package.json and lock, installed on first use with `npm ci --prefix bench/peer-langgraph`; the import goes
 * through a computed URL so the root project's typecheck never reads them. The types below mirror agent.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { McpServerConfig } from '../src/mcp/mcp-config.ts';

/** What the peer is given (see bench/peer-langgraph/agent.ts). */
export interface PeerOptions {
  baseURL: string;
  model: string;
  servers: { name: string; transport: McpServerConfig['transport'] }[];
  allowedTools: string[];
  toolFloorMs: number;
  systemPrompt: string;
}

/** One request run by the peer. */
export interface PeerOutcome {
  answer: string | null;
  toolCalls: number;
  callsPerTurn: string[][];
  error?: string;
}

/** A connected peer. */
export interface PeerAgent {
  toolCount: number;
  run(request: string): Promise<PeerOutcome>;
  close(): Promise<void>;
}

type CreatePeer = (options: PeerOptions) => Promise<PeerAgent>;

const DIR = join(import.meta.dirname, 'peer-langgraph');

/** The peer's factory, or a sentence saying why it could not be loaded. */
export async function loadPeer(
  log: (line: string) => void,
): Promise<{ ok: true; createPeer: CreatePeer; versions: string } | { ok: false; why: string }> {
  if (!existsSync(join(DIR, 'node_modules', 'langchain'))) {
    log('installing the LangGraph peer: npm ci --prefix bench/peer-langgraph');
    const npm = spawnSync('npm', ['ci', '--prefix', DIR, '--no-audit', '--no-fund'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (npm.status !== 0) {
      const detail = (npm.stderr || npm.error?.message || '').trim().split('\n').slice(-3).join(' ');
      return {
        ok: false,
        why: `The LangGraph peer could not be installed (\`npm ci --prefix bench/peer-langgraph\` failed: ${detail || `exit ${npm.status}`}), so the comparison against it was left out. Run that command by hand to see why (it needs the npm registry).`,
      };
    }
  }
  try {
    const url = pathToFileURL(join(DIR, 'agent.ts')).href;
    const module = (await import(url)) as { createPeer: CreatePeer };
    return { ok: true, createPeer: module.createPeer, versions: peerVersions() };
  } catch (err) {
    return {
      ok: false,
      why: `The LangGraph peer could not be loaded (${String(err)}), so the comparison was left out.`,
    };
  }
}

function peerVersions(): string {
  try {
    const lock = JSON.parse(readFileSync(join(DIR, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const packages = lock.packages;
    return ['langchain', '@langchain/core', '@langchain/langgraph', '@langchain/openai', '@langchain/mcp-adapters']
      .map((p) => `${p} ${packages[`node_modules/${p}`]?.version ?? '?'}`)
      .join(', ');
  } catch {
    return '?';
  }
}

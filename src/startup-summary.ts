/**
 * The block Steward prints at start under its status line: which model each role uses and where that came from,
 * which database, which channels, and each MCP server with its tool count. Pure: `app.ts` gathers the facts.
 */
import type { ModelRole } from './engine/ports.ts';

/** One role's model: as sent (`openai:gpt-4.1`), its catalog name if any, and where it was set. */
export interface RoleModelFact {
  role: ModelRole;
  model: string;
  catalogName?: string;
  source: string;
}

/** What the block says. */
export interface StartupFacts {
  /** `undefined`: embedded PGlite in `pgliteDir`; else the PostgreSQL URL (its password is never shown). */
  databaseUrl: string | undefined;
  pgliteDir: string;
  models: RoleModelFact[];
  channels: string[];
  /** Every server of the MCP config: connected with its tool count, failed to start, or disabled. */
  servers: { name: string; tools: number; state: 'connected' | 'failed' | 'disabled' | 'awaiting approver' }[];
}

const ROLE_WORDS: Readonly<Record<ModelRole, string>> = {
  planner: 'planner',
  classifier: 'classifier',
  synthesizer: 'report writer',
  llm_step: 'llm steps',
  butler: 'quick answers',
};

/** The lines of the block, each starting with two spaces. */
export function startupSummary(facts: StartupFacts): string[] {
  return [
    `  Database: ${databaseWords(facts.databaseUrl, facts.pgliteDir)}.`,
    ...modelLines(facts.models),
    `  Channels: ${facts.channels.join(', ')}.`,
    `  MCP servers: ${serverWords(facts.servers)}.`,
  ];
}

/** PostgreSQL's host, port, database and user, never its password; or PGlite's folder. */
export function databaseWords(databaseUrl: string | undefined, pgliteDir: string): string {
  if (databaseUrl === undefined) return `embedded PostgreSQL (PGlite) in ${pgliteDir} (DATABASE_URL is not set)`;
  try {
    const url = new URL(databaseUrl);
    const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(the user’s default database)';
    const user = url.username ? `, as ${decodeURIComponent(url.username)}` : '';
    return `PostgreSQL at ${url.host || 'the local socket'}, database ${name}${user} (DATABASE_URL)`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

function modelLines(models: RoleModelFact[]): string[] {
  const named = (m: RoleModelFact) => (m.catalogName === undefined ? m.model : `${m.catalogName} (${m.model})`);
  // A catalog gives each role its own line (roles.planner, roles.classifier, …), all from one file.
  const from = (m: RoleModelFact) => m.source.replace(/^roles\.\w+ of /, 'the roles of ');
  const sources = new Set(models.map(from));
  const first = models[0];
  if (sources.size === 1 && first && new Set(models.map(named)).size === 1) {
    return [`  Models: ${named(first)} for every role, from ${from(first)}.`];
  }
  return ['  Models:', ...models.map((m) => `    ${ROLE_WORDS[m.role]}: ${named(m)}, from ${m.source}`)];
}

const STATE_WORDS = {
  failed: 'failed to start: retrying in the background',
  disabled: 'disabled',
  'awaiting approver': 'waits for an approver to connect it for the workspace',
} as const;

function serverWords(servers: StartupFacts['servers']): string {
  if (servers.length === 0) return 'none';
  return servers
    .map((s) =>
      s.state === 'connected'
        ? `${s.name} (${s.tools} tool${s.tools === 1 ? '' : 's'})`
        : `${s.name} (${STATE_WORDS[s.state]})`,
    )
    .join(', ');
}

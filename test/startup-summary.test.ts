import { describe, expect, it } from 'vitest';
import { databaseWords, startupSummary, type StartupFacts } from '../src/startup-summary.ts';

const facts = (overrides: Partial<StartupFacts> = {}): StartupFacts => ({
  databaseUrl: undefined,
  pgliteDir: 'data/pglite',
  models: [
    { role: 'planner', model: 'openai:llama3.1', catalogName: 'local', source: 'roles.planner of models.json' },
    { role: 'classifier', model: 'openai:llama3.1', catalogName: 'local', source: 'roles.classifier of models.json' },
  ],
  channels: ['console'],
  servers: [],
  ...overrides,
});

describe('the start-up summary', () => {
  it('says one line for one model and one source, with the catalog name and the model as sent', () => {
    expect(startupSummary(facts())).toEqual([
      '  Database: embedded PostgreSQL (PGlite) in data/pglite (DATABASE_URL is not set).',
      '  Models: local (openai:llama3.1) for every role, from the roles of models.json.',
      '  Channels: console.',
      '  MCP servers: none.',
    ]);
  });

  it('names a server that failed to start, a disabled one, and counts tools', () => {
    const servers: StartupFacts['servers'] = [
      { name: 'fs', tools: 1, state: 'connected' },
      { name: 'web', tools: 0, state: 'failed' },
      { name: 'remote', tools: 0, state: 'disabled' },
    ];
    expect(startupSummary(facts({ servers }))[3]).toBe(
      '  MCP servers: fs (1 tool), web (failed to start: retrying in the background), remote (disabled).',
    );
  });

  it("never shows the database URL's password", () => {
    const words = databaseWords('postgres://steward:pw-canary@db.internal:5433/runs', 'x');
    expect(words).toBe('PostgreSQL at db.internal:5433, database runs, as steward (DATABASE_URL)');
    expect(databaseWords('postgresql://:pw-canary@/runs?host=/var/run/postgresql', 'x')).not.toContain('pw-canary');
  });
});

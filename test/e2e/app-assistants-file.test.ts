/**
 * The Assistants bootstrap file at start (issue 16): a bad entry refuses start-up with one sentence naming it (before
 * the database is opened), and a good file (the shipped example) is applied and audited as changed by "file".
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../src/app.ts';
import { PgAssistantStore } from '../../src/store/pg-assistant-store.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { seedPglite } from '../helpers/databases.ts';

let app: App | undefined;
let llm: FakeLlm | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await llm?.close();
  llm = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function envWith(file: string): Promise<NodeJS.ProcessEnv> {
  llm = await startFakeLlm();
  dir = mkdtempSync(join(tmpdir(), 'steward-assistants-'));
  await seedPglite(join(dir, 'data'));
  return {
    OPENAI_BASE_URL: llm.baseURL,
    STEWARD_MODEL: 'm',
    DATA_DIR: join(dir, 'data'),
    MCP_CONFIG: join(dir, 'missing-mcp.json'),
    STEWARD_ASSISTANTS_FILE: join(dir, file),
  };
}

const start = (env: NodeJS.ProcessEnv) => startApp({ env, input: new PassThrough(), output: new PassThrough() });

describe('the Assistants file at start', () => {
  it('refuses start-up with a sentence naming the bad entry and field', async () => {
    const env = await envWith('assistants.json');
    const bad = {
      assistants: [
        { name: 'ops', purpose: 'Operations', grants: { fs: 'allow' } },
        { name: 'web', purpose: 'The web', grants: { 'web.get': 'yes' } },
      ],
    };
    writeFileSync(env.STEWARD_ASSISTANTS_FILE!, JSON.stringify(bad));
    await expect(start(env)).rejects.toThrow(
      /assistants\.json: assistants\[1\]\.grants\["web\.get"\]: must be "allow" or "deny" \(the Assistant "web"\)/,
    );
  });

  it('refuses a named file that is missing, and an entry named twice', async () => {
    const env = await envWith('nowhere.json');
    await expect(start(env)).rejects.toThrow(/nowhere\.json: cannot read the Assistants file/);
    const twice = {
      assistants: [
        { name: 'ops', purpose: 'a' },
        { name: 'ops', purpose: 'b' },
      ],
    };
    writeFileSync(env.STEWARD_ASSISTANTS_FILE!, JSON.stringify(twice));
    await expect(start(env)).rejects.toThrow(/the Assistant "ops" is defined twice/);
  });

  it('applies the shipped example, audited as changed by "file", and writes nothing more on the next start', async () => {
    const env = await envWith('assistants.json');
    copyFileSync(join(import.meta.dirname, '../../assistants.json.example'), env.STEWARD_ASSISTANTS_FILE!);
    app = await start(env);
    const store = new PgAssistantStore(app.database.db);
    const ops = await store.getAssistant('ops');
    // The example names no model, so its Assistant plans with the roles' models in any setup (test/examples.test.ts).
    expect(ops).toMatchObject({ defaultGrant: 'deny', models: {} });
    expect(ops?.grants).toContainEqual({ scope: 'tool', target: 'fs.write_file', effect: 'deny' });
    expect(ops?.grants).toContainEqual({ scope: 'server', target: 'fs', effect: 'allow' });
    await app.close();
    app = await start(env);
    const changes = await new PgAssistantStore(app.database.db).listChanges('ops', 10);
    expect(changes.map((c) => [c.action, c.changedBy])).toEqual([['create', 'file']]);
  });
});

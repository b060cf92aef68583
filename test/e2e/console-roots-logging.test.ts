/**
 * Roots and server logging through the real entry point's parts (issue 29): server-filesystem started with no
 * directory arguments works in the directories `mcp.json` names as `roots`; server-everything asks for the roots and
 * says so in a log message, which reaches Steward's log at `"logLevel": "info"` (never a prompt) and is not even sent
 * at the default level, warning.
 */
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import {
  EVERYTHING_SCRIPT,
  FILESYSTEM_SCRIPT,
  httpServerConfig,
  serverConfig,
  startEverythingHttp,
  type HttpTestServer,
} from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let http: HttpTestServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await http?.close();
  http = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const ROOTS_LOGGED =
  'MCP server "everything" logged info (everything-server): Roots updated: 1 root(s) received from client';

async function tempDir(): Promise<string> {
  // realpath: the filesystem server compares resolved paths, and the temp dir may sit behind a symlink.
  dir = await realpath(await mkdtemp(join(tmpdir(), 'steward-roots-')));
  return dir;
}

describe('console, roots and server logging (postgres)', () => {
  it('server-filesystem with no directory arguments reads a file under the roots mcp.json names', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'note.txt'), 'the roots reached the server');
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('fs', { command: process.execPath, args: [FILESYSTEM_SCRIPT], roots: [root] })],
      script: byRole({
        planner: [
          planReply([
            { id: 'dirs', tool: 'fs.list_allowed_directories', args: {} },
            { id: 'read', tool: 'fs.read_text_file', args: { path: join(root, 'note.txt') } },
          ]),
        ],
        synthesizer: ['It says the roots reached the server.'],
      }),
    });
    await h.type('what does note.txt say?');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
    const text = (id: string) => JSON.stringify(attempts.find((a) => a.stepId === id)!.output);
    expect(attempts.map((a) => a.status)).toEqual(['succeeded', 'succeeded']);
    expect(text('dirs')).toContain(root);
    expect(text('read')).toContain('the roots reached the server');
  });

  it.each(['stdio', 'http'] as const)(
    'a server log message at the configured level reaches the log as one line, never a prompt (%s)',
    async (transport) => {
      const root = await tempDir();
      if (transport === 'http') http = await startEverythingHttp();
      const entry = { roots: [root], logLevel: 'info' };
      h = await startHarness({
        db: 'postgres',
        servers: [
          http
            ? httpServerConfig(http.url, { overrides: entry })
            : serverConfig('everything', { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'], ...entry }),
        ],
        script: byRole({
          planner: [planReply([{ id: 'roots', tool: 'everything.get-roots-list', args: {} }])],
          synthesizer: ['One root.'],
        }),
      });
      await h.type('which roots do you have?');
      await h.waitFor(/=== Report \(completed\) ===/);
      await h.steward.idle();
      const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
      expect(JSON.stringify(attempts[0]!.output)).toContain(pathToFileURL(root).href);
      expect(h.mcpLogs).toContain(`info ${ROOTS_LOGGED}`);
      expect(JSON.stringify(h.llm.requests.map((r) => r.body))).not.toContain('Roots updated');
    },
  );

  it('at the default level, warning, the server’s info message is not logged', async () => {
    const root = await tempDir();
    h = await startHarness({
      db: 'postgres',
      servers: [
        serverConfig('everything', { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'], roots: [root] }),
      ],
      script: byRole({
        planner: [planReply([{ id: 'roots', tool: 'everything.get-roots-list', args: {} }])],
        synthesizer: ['One root.'],
      }),
    });
    await h.type('which roots do you have?');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    // The roots were asked for (the tool's answer lists them), and the message the server logs then was not sent.
    const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
    expect(JSON.stringify(attempts[0]!.output)).toContain(pathToFileURL(root).href);
    expect(h.mcpLogs.join('\n')).not.toContain('Roots updated');
  });
});

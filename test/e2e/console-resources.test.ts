/**
 * MCP resources through the real entry point's parts (issue 29): the planner is shown server-everything's resources
 * and templates, a plan follows a `resource_link` an earlier step returned with the built-in `steward.read_resource`
 * (over stdio and Streamable HTTP), a blob is kept whole, a read from a server without resources is refused before
 * anything runs, and Stop cancels a read in flight.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import {
  everythingStdioConfig,
  filesystemStdioConfig,
  httpServerConfig,
  serverConfig,
  startEverythingHttp,
  type HttpTestServer,
} from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

// A server that never answers a read (server-everything answers at once) and logs each cancel it gets.
const SLOW_FIXTURE = join(import.meta.dirname, '../mcp/fixtures/resource-log-server.mjs');

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

const followLink = planReply([
  { id: 'links', tool: 'everything.get-resource-links', args: { count: 2 } },
  {
    id: 'text',
    tool: 'steward.read_resource',
    args: { server: 'everything', uri: { $ref: 'steps.links.output.content[2].uri' } },
    dependsOn: ['links'],
  },
  { id: 'blob', tool: 'steward.read_resource', args: { server: 'everything', uri: 'demo://resource/dynamic/blob/7' } },
]);

type Stored = {
  content: { type: string; resource?: { uri: string; mimeType?: string; text?: string; blob?: string } }[];
};

describe('console, MCP resources (postgres)', () => {
  it.each(['stdio', 'http'] as const)(
    'shows the planner the resources, follows a resource_link and keeps a blob (%s)',
    async (transport) => {
      if (transport === 'http') http = await startEverythingHttp();
      h = await startHarness({
        db: 'postgres',
        servers: [http ? httpServerConfig(http.url) : everythingStdioConfig()],
        script: byRole({ planner: [followLink], synthesizer: ['Resource 2 is plain text.'] }),
      });
      await h.type('read the second resource it links to');
      // server-everything's gzip-file-as-resource fetches from the open world (openWorldHint), so its resources may
      // hold what it fetched: a URI an earlier output chose waits for a person before it is read from there.
      await h.waitFor(
        /Step text \(steward\.read_resource\) takes values from earlier steps that nobody has seen yet; it would send: \{"server":"everything","uri":"demo:\/\/resource\/dynamic\/text\/2"\}/,
      );
      await h.type('approve');
      await h.waitFor(/=== Report \(completed\) ===/);
      await h.steward.idle();
      const planner = JSON.stringify(h.llm.requests.find((r) => r.role === 'planner')!.body);
      expect(planner).toContain('Resources a step may read with steward.read_resource (server, uri)');
      expect(planner).toContain('demo://resource/static/document/');
      expect(planner).toContain('template demo://resource/dynamic/text/{resourceId} (Dynamic Text Resource)');
      const synth = h.llm.requests.find((r) => r.role === 'synthesizer')!;
      expect(synth.lastUserText).toContain(
        '[resource <demo://resource/dynamic/text/2> (text/plain)]\nResource 2: This is a plaintext resource',
      );
      const run = await onlyRun(h);
      // Read-only but open-world (as that server's reads are): the reads wait for the whole plan; the link listing,
      // closed-world, starts while the plan is still being written.
      const early = (await h.store.listEvents(run.id))
        .filter((e) => e.type === 'stepsStartedEarly')
        .flatMap((e) => (e.payload as { steps: { id: string }[] }).steps.map((st) => st.id));
      expect(early).toEqual(['links']);
      const attempts = await h.store.listStepAttempts(run.id);
      const output = (id: string) => attempts.find((a) => a.stepId === id)!.output as Stored;
      expect(attempts.find((a) => a.stepId === 'text')!.args).toEqual({
        server: 'everything',
        uri: 'demo://resource/dynamic/text/2',
      });
      expect(output('text').content[0]!.resource!.text).toMatch(/^Resource 2: This is a plaintext resource/);
      const blob = output('blob').content[0]!.resource!;
      expect(blob.uri).toBe('demo://resource/dynamic/blob/7');
      expect(Buffer.from(blob.blob!, 'base64').toString('utf8')).toMatch(/^Resource 7: This is a base64 blob/);
    },
  );

  it('Stop cancels a resource read in flight as it cancels a call: the server is told, the run stops', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('res', { command: process.execPath, args: [SLOW_FIXTURE] })],
      script: byRole({
        planner: [
          planReply([{ id: 'r', tool: 'steward.read_resource', args: { server: 'res', uri: 'slow://forever' } }]),
        ],
        synthesizer: ['Stopped while reading.'],
      }),
    });
    await h.type('read the slow resource');
    await h.waitFor(/▶ r running/);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    await waitUntil('the server to hear of the cancel', () =>
      h!.mcpLogs.find((l) => /^error MCP server "res" logged error: cancelled request \d+$/.test(l)),
    );
    const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
    expect(attempts.map((a) => a.status)).not.toContain('succeeded');
  });

  it('refuses a read from a server without resources before anything runs, naming the servers that have some', async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'steward-res-')));
    const read = (server: string) =>
      planReply([{ id: 'r', tool: 'steward.read_resource', args: { server, uri: 'demo://resource/dynamic/text/1' } }]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig(), filesystemStdioConfig(dir)],
      script: byRole({ planner: [read('fs'), read('everything')], synthesizer: ['Resource 1.'] }),
    });
    await h.type('read resource 1');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const planner = h.llm.requests.filter((r) => r.role === 'planner');
    expect(planner).toHaveLength(2);
    expect(planner[1]!.lastUserText).toContain(
      'step r: argument server must be equal to one of the allowed values ("everything")',
    );
    const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
    expect(attempts.map((a) => [a.stepId, a.args])).toEqual([
      ['r', { server: 'everything', uri: 'demo://resource/dynamic/text/1' }],
    ]);
  });
});

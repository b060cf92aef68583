/**
 * Rich outputs reach the report writer (issue 29), through the real entry point: server-filesystem's
 * read_media_file answers with nothing but an image block, whose base64 used to go into the synthesizer's prompt;
 * server-everything's get-resource-links answers with resource_link blocks, whose URIs never reached it; and
 * get-resource-reference embeds a resource whose text did not. Every block is still stored whole.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, filesystemStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('console, rich outputs to the report writer (postgres)', () => {
  it('sends an image as a one-line description, links with their URIs and embedded text, and never base64', async () => {
    // realpath: the server compares resolved paths, and the temp dir may sit behind a symlink.
    dir = await realpath(await mkdtemp(join(tmpdir(), 'steward-rich-')));
    const image = randomBytes(3000);
    await writeFile(join(dir, 'chart.png'), image);
    h = await startHarness({
      db: 'postgres',
      servers: [filesystemStdioConfig(dir), everythingStdioConfig()],
      script: byRole({
        planner: [
          planReply([
            { id: 'img', tool: 'fs.read_media_file', args: { path: join(dir, 'chart.png') } },
            { id: 'links', tool: 'everything.get-resource-links', args: { count: 2 } },
            { id: 'doc', tool: 'everything.get-resource-reference', args: { resourceType: 'Text', resourceId: 2 } },
          ]),
        ],
        synthesizer: ['Here is the chart and two links.'],
      }),
    });
    await h.type('show me the chart and the links');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const synth = h.llm.requests.find((r) => r.role === 'synthesizer')!;
    const prompt = JSON.stringify(synth.body);
    const base64 = image.toString('base64');
    expect(prompt).not.toContain(base64.slice(0, 64));
    expect(synth.lastUserText).toContain(
      'img (fs.read_media_file, no description): SUCCEEDED — [image: image/png, 2.9 kB]',
    );
    expect(synth.lastUserText).toMatch(/\[link: Blob Resource 1 <demo:\/\/resource\/dynamic\/blob\/1>/);
    expect(synth.lastUserText).toMatch(/\[link: Text Resource 2 <demo:\/\/resource\/dynamic\/text\/2> \(text\/plain\)/);
    expect(synth.lastUserText).toContain(
      '[resource <demo://resource/dynamic/text/2> (text/plain)]\nResource 2: This is a plaintext resource',
    );
    // Stored whole: the image block, base64 and all, is in the step's output in the database.
    const attempts = await h.store.listStepAttempts((await onlyRun(h)).id);
    const stored = attempts.find((a) => a.stepId === 'img')!.output as { content: { type: string; data?: string }[] };
    expect(stored.content).toEqual([{ type: 'image', data: base64, mimeType: 'image/png' }]);
  });
});

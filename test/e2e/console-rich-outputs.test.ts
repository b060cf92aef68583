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
import {
  EVERYTHING_TINY_IMAGE as MCP_TINY_IMAGE,
  everythingStdioConfig,
  filesystemStdioConfig,
} from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';
import { parseModelCatalog } from '../../src/llm/model-catalog.ts';

/** Five steps each answering with server-everything's tiny PNG (its base64 is the canary). */
const fiveImages = Array.from({ length: 5 }, (_, i) => ({
  id: `img${i + 1}`,
  tool: 'everything.get-tiny-image',
  args: {},
}));
type Part = { type: string; text?: string; image_url?: { url: string } };
const userParts = (body: Record<string, unknown>): Part[] => {
  const messages = body['messages'] as { role: string; content: string | Part[] }[];
  const content = messages.filter((m) => m.role === 'user').at(-1)!.content;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
};

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

  it("shows a run's images to a synthesizer the catalog marks seesImages, at most four, and says which were left out", async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      catalog: parseModelCatalog(
        JSON.stringify({ models: { 'synth-model': { spec: 'synth-model', seesImages: true } } }),
        'models.json',
        ['planner', 'classifier', 'synthesizer', 'llm_step', 'butler'],
      ),
      script: byRole({ planner: [planReply(fiveImages)], synthesizer: ['Five logos.'] }),
    });
    await h.type('show me the logo five times');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const parts = userParts(h.llm.requests.find((r) => r.role === 'synthesizer')!.body);
    const images = parts.filter((p) => p.type === 'image_url');
    expect(images.map((p) => p.image_url!.url)).toEqual(Array(4).fill(`data:image/png;base64,${MCP_TINY_IMAGE}`));
    const texts = parts.filter((p) => p.type === 'text').map((p) => p.text!);
    expect(texts).toContain('Image 1, from step img1: img1-1.png (image/png, 3.9 kB)');
    expect(texts[0]).toContain('Images not shown to you (described in the step results only): img5-1.png');
    expect(texts[0]).toContain('(past the first 4 images)');
    // The base64 travels only as images, never inside the words.
    expect(texts.join('\n')).not.toContain(MCP_TINY_IMAGE.slice(0, 64));
  });

  it('gives a synthesizer not marked seesImages the images in words only, never base64, and prints each file after the report', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [planReply(fiveImages.slice(0, 1))], synthesizer: ['One logo.'] }),
    });
    await h.type('show me the logo');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const synth = h.llm.requests.find((r) => r.role === 'synthesizer')!;
    expect(JSON.stringify(synth.body)).not.toContain(MCP_TINY_IMAGE.slice(0, 64));
    expect(userParts(synth.body).map((p) => p.type)).toEqual(['text']);
    expect(synth.lastUserText).toContain('[image: image/png, 3.9 kB]');
    // The console cannot show the image: it names it with its size, after the report.
    const printed = await h.waitFor(/Files from this run[^\n]*\n.*/);
    expect(printed).toBe(
      'Files from this run (1, not saved; the dashboard shows them):\n  📎 img1-1.png (image/png, 3.9 kB) from step img1',
    );
    expect(h.output().indexOf('One logo.')).toBeLessThan(h.output().indexOf('Files from this run'));
  });
});

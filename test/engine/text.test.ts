import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/engine/types.ts';
import { blockText, outputText } from '../../src/engine/text.ts';

const png = Buffer.alloc(2048, 7).toString('base64');

describe('outputText', () => {
  it('an output with only an image block is a one-line description, not its base64 (read_media_file)', () => {
    const text = outputText({ content: [{ type: 'image', data: png, mimeType: 'image/png' }] });
    expect(text).toBe('[image: image/png, 2.0 kB]');
  });

  it('keeps text blocks and every other block in order, in words', () => {
    const output: Json = {
      content: [
        { type: 'text', text: 'Two things:' },
        { type: 'resource_link', uri: 'file:///r/a.txt', name: 'a.txt', title: 'Notes', mimeType: 'text/plain' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///r/b.bin', blob: png, mimeType: 'application/octet-stream' } },
        { type: 'resource', resource: { uri: 'file:///r/c.md', text: '# C' } },
        { type: 'hologram', data: png },
      ],
    };
    expect(outputText(output).split('\n')).toEqual([
      'Two things:',
      '[link: Notes <file:///r/a.txt> (text/plain)]',
      '[audio: audio/wav, 3 bytes]',
      '[resource <file:///r/b.bin>: application/octet-stream, 2.0 kB]',
      '[resource <file:///r/c.md>]',
      '# C',
      '[hologram block]',
    ]);
  });

  it('falls back to structuredContent when there are no blocks, and never shows base64 from an unknown block', () => {
    expect(outputText({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
    expect(blockText({ type: 'hologram', data: png })).not.toContain(png.slice(0, 16));
  });
});

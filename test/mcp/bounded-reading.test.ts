import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBoundedFetch } from '../../src/mcp/bounded-fetch.ts';
import { BoundedReadBuffer } from '../../src/mcp/bounded-read-buffer.ts';
import { OUTPUT_TOO_LARGE, OversizedMessage, type OversizedSummary } from '../../src/mcp/oversized-message.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Feeds `text` in chunks of `size` bytes. */
function scan(text: string, size = 7): OversizedSummary {
  const message = new OversizedMessage(10);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) message.push(bytes.subarray(i, i + size));
  return message.finish();
}

describe('reading only the top level of an oversized message', () => {
  it('finds the id wherever it sits, counts and hashes every byte', () => {
    const body = JSON.stringify({ content: [{ type: 'text', text: 'é"\\}{,:'.repeat(50), id: 'inner' }] });
    const last = `{"result":${body},"jsonrpc":"2.0","id":42}`;
    expect(scan(last)).toEqual({
      bytes: Buffer.byteLength(last),
      sha256: sha256(last),
      id: 42,
      hasMethod: false,
      limit: 10,
    });
    expect(scan(`{ "id" : "req-7" , "result": ${body} }`, 1)).toMatchObject({ id: 'req-7', hasMethod: false });
    expect(scan(`{"jsonrpc":"2.0","method":"notifications/message","params":${body}}`)).toMatchObject({
      id: undefined,
      hasMethod: true,
    });
  });

  it('gives no id for one that is not a number or a string, or too long to be one Steward sent', () => {
    expect(scan('{"id":{"x":1},"result":{}}').id).toBeUndefined();
    expect(scan(`{"id":"${'a'.repeat(500)}","result":{}}`).id).toBeUndefined();
    expect(scan('{"result":{"id":3}}').id).toBeUndefined();
  });
});

describe('the bounded stdio read buffer', () => {
  const drain = (buffer: BoundedReadBuffer) => {
    const out: unknown[] = [];
    for (;;) {
      try {
        const message = buffer.readMessage();
        if (message === null) return out;
        out.push(message);
      } catch (err) {
        out.push((err as Error).message);
      }
    }
  };

  it('passes messages within the bound and turns a longer one into an error response for its id', () => {
    const refused: OversizedSummary[] = [];
    const buffer = new BoundedReadBuffer(100, (s) => refused.push(s));
    const big = `{"result":{"content":[{"type":"text","text":"${'x'.repeat(300)}"}]},"jsonrpc":"2.0","id":5}`;
    const small = '{"jsonrpc":"2.0","id":6,"result":{}}';
    const stream = Buffer.from(
      `${small}\n\n${big}\r\n${small}\n{"jsonrpc":"2.0","method":"x","params":"${'y'.repeat(200)}"}\n`,
    );
    for (let i = 0; i < stream.length; i += 33) buffer.append(stream.subarray(i, i + 33));
    const sizeOfBig = Buffer.byteLength(big) + 1; // its \r is part of the line as received
    expect(drain(buffer)).toEqual([
      JSON.parse(small),
      {
        jsonrpc: '2.0',
        id: 5,
        error: {
          code: OUTPUT_TOO_LARGE,
          message: `output too large: ${sizeOfBig} bytes (limit 100), sha256 ${sha256(`${big}\r`)}`,
          data: { bytes: sizeOfBig, sha256: sha256(`${big}\r`), limit: 100 },
        },
      },
      JSON.parse(small),
      expect.stringMatching(/^MCP message dropped: output too large: \d+ bytes/),
    ]);
    expect(refused.map((r) => r.hasMethod)).toEqual([false, true]);
  });
});

describe('the bounded fetch for Streamable HTTP', () => {
  const request = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: {} }) };
  const reply =
    (body: string, type: string, status = 200) =>
    async () =>
      new Response(body, { status, headers: { 'content-type': type, 'content-length': String(body.length) } });

  it('replaces an oversized SSE event with an error for the request it answers, and keeps the others', async () => {
    const big = `{"jsonrpc":"2.0","result":{"text":"${'x'.repeat(500)}"}}`;
    const events = `id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\nid: 2\ndata: ${big}\n\n`;
    const fetch = createBoundedFetch(200, () => {}, reply(events, 'text/event-stream'));
    const text = await (await fetch('http://x/mcp', request)).text();
    const [first, second] = text.split('\n\n');
    expect(first).toBe('id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}');
    // No id in the refused data: the one request this POST carried is answered.
    expect(JSON.parse(second!.replace(/^event: message\ndata: /, ''))).toMatchObject({
      id: 9,
      error: {
        code: OUTPUT_TOO_LARGE,
        message: expect.stringMatching(/^output too large: \d+ bytes \(limit 200\)/) as unknown,
      },
    });
  });

  it('replaces an oversized JSON body, and cuts an error page', async () => {
    const big = `{"jsonrpc":"2.0","id":9,"result":{"text":"${'x'.repeat(500)}"}}`;
    const json = await createBoundedFetch(200, () => {}, reply(big, 'application/json'))('http://x/mcp', request);
    expect(json.headers.get('content-length')).toBeNull();
    expect(await json.json()).toMatchObject({ id: 9, error: { code: OUTPUT_TOO_LARGE } });
    const page = await createBoundedFetch(
      200,
      () => {},
      reply('e'.repeat(5000), 'text/html', 500),
    )('http://x', request);
    expect(page.status).toBe(500);
    expect(await page.text()).toHaveLength(200);
  });
});

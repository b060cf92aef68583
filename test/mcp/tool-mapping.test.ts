import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { toStepError } from '../../src/mcp/call-errors.ts';
import { OUTPUT_TOO_LARGE } from '../../src/mcp/oversized-message.ts';
import { fingerprintOf, maxTotalTimeoutFor, toToolInfo, toToolOutput } from '../../src/mcp/tool-mapping.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';

const tool = (name: string, annotations: Record<string, unknown> = {}) => ({
  name,
  inputSchema: { type: 'object' as const },
  annotations,
});

describe('toToolInfo', () => {
  const server = serverConfig('gh', {
    command: 'x',
    risk: 'medium',
    allowed: false,
    idempotent: false,
    timeoutMs: 9000,
    maxTotalTimeoutMs: 90_000,
    tools: { delete_repo: { risk: 'high', allowed: true, timeoutMs: 100, maxTotalTimeoutMs: 200, idempotent: true } },
  });

  it('lets a tool override win over the server override', () => {
    expect(toToolInfo(server, tool('delete_repo')).policy).toEqual({
      allowed: true,
      risk: 'high',
      idempotent: true,
      timeoutMs: 100,
    });
    expect(maxTotalTimeoutFor(server, 'delete_repo')).toBe(200);
  });

  it('falls back to the server override, then to defaults', () => {
    expect(toToolInfo(server, tool('list_repos')).policy).toEqual({
      allowed: false,
      risk: 'medium',
      idempotent: false,
      timeoutMs: 9000,
    });
    expect(maxTotalTimeoutFor(server, 'list_repos')).toBe(90_000);
    expect(toToolInfo(serverConfig('plain', { command: 'x' }), tool('t')).policy).toEqual({
      allowed: true,
      timeoutMs: 60_000,
    });
  });

  it("gives every tool its server's maxConcurrency, and leaves the fingerprint alone", () => {
    const narrow = serverConfig('gh', { command: 'x', maxConcurrency: 2 });
    const info = toToolInfo(narrow, tool('list_repos'));
    expect(info.policy.maxConcurrency).toBe(2);
    expect(info.fingerprint).toBe(toToolInfo(serverConfig('gh', { command: 'x' }), tool('list_repos')).fingerprint);
  });

  it('readOnly and openWorld in mcp.json win over the annotations, a tool entry over its server', () => {
    const s = serverConfig('crm', {
      command: 'x',
      readOnly: true,
      openWorld: false,
      tools: { export: { openWorld: true }, note: { readOnly: false } },
    });
    const hints = (name: string, given: Record<string, boolean> = {}) => toToolInfo(s, tool(name, given)).annotations;
    // A tool that says nothing takes the server's word; a tool entry wins over the server's.
    expect(hints('lookup')).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(hints('export')).toEqual({ readOnlyHint: true, openWorldHint: true });
    expect(hints('note')).toEqual({ readOnlyHint: false, openWorldHint: false });
    // A tool entry's word wins over the tool's own annotations, either way.
    expect(hints('export', { openWorldHint: false })).toMatchObject({ openWorldHint: true });
    expect(hints('note', { readOnlyHint: true })).toMatchObject({ readOnlyHint: false });
  });

  it('a server-wide readOnly or closed world only narrows: a tool that says it writes, destroys or reaches out keeps it', () => {
    const s = serverConfig('crm', { command: 'x', readOnly: true, openWorld: false });
    const hints = (given: Record<string, boolean>) => toToolInfo(s, tool('t', given)).annotations;
    expect(hints({ readOnlyHint: false, openWorldHint: true })).toEqual({ readOnlyHint: false, openWorldHint: true });
    expect(hints({ destructiveHint: true })).toEqual({ destructiveHint: true, openWorldHint: false });
    // The other way, a server-wide word that calls tools writing or open-world holds over what they say.
    const wide = serverConfig('web', { command: 'x', readOnly: false, openWorld: true });
    expect(toToolInfo(wide, tool('t', { readOnlyHint: true, openWorldHint: false })).annotations).toEqual({
      readOnlyHint: false,
      openWorldHint: true,
    });
    // The pinned definition keeps what the server said.
    expect(toToolInfo(s, tool('lookup')).fingerprint).toBe(
      toToolInfo(serverConfig('crm', { command: 'x' }), tool('lookup')).fingerprint,
    );
  });

  it('keeps the four boolean hints as given and nothing else', () => {
    const info = toToolInfo(
      server,
      tool('t', { title: 'T', readOnlyHint: false, destructiveHint: true, openWorldHint: 'yes' }),
    );
    expect(info.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
    expect(info).toMatchObject({ name: 'gh.t', server: 'gh', tool: 't', description: '' });
  });
});

describe('toToolOutput', () => {
  it('keeps content, structured content and isError', () => {
    expect(
      toToolOutput({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 }, isError: true }),
    ).toEqual({
      content: [{ type: 'text', text: 'x' }],
      structuredContent: { a: 1 },
      isError: true,
    });
  });

  it('wraps an old-protocol toolResult as text', () => {
    expect(toToolOutput({ toolResult: { a: 1 } })).toEqual({ content: [{ type: 'text', text: '{"a":1}' }] });
  });
});

describe('toStepError', () => {
  const call = { name: 'gh.t', server: 'gh', timeoutMs: 500, cancelledByCaller: false };

  it('calls it cancelled when the caller aborted, although the SDK reports aborts as RequestTimeout', () => {
    const err = new McpError(ErrorCode.RequestTimeout, 'AbortError: This operation was aborted');
    expect(toStepError(err, { ...call, cancelledByCaller: true })).toEqual({
      code: 'cancelled',
      message: 'gh.t was cancelled.',
      retryable: false,
    });
  });

  it('tells a plain timeout from the hard total limit', () => {
    expect(toStepError(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: 500 }), call)).toEqual({
      code: 'timeout',
      retryable: true,
      message: 'gh.t did not answer within 500 ms.',
    });
    const capped = new McpError(ErrorCode.RequestTimeout, 'Maximum total timeout exceeded', {
      maxTotalTimeout: 900,
      totalElapsed: 901,
    });
    expect(toStepError(capped, call).message).toBe(
      'gh.t was still running after its hard limit of 900 ms, although it kept reporting progress.',
    );
  });

  it('treats failures before sending as server_unavailable, losses after it as interrupted, malformed results as tool_error', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    expect(toStepError(refused, call)).toEqual({
      code: 'server_unavailable',
      retryable: true,
      message: 'MCP server "gh" is unavailable: fetch failed (ECONNREFUSED).',
    });
    expect(
      toStepError(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), {
        ...call,
        serverGone: 'its process exited',
      }),
    ).toEqual({
      code: 'interrupted',
      retryable: true,
      message:
        'MCP server "gh" went away while gh.t was running (its process exited); the tool may have acted already.',
    });
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });
    expect(toStepError(reset, call)).toMatchObject({ code: 'interrupted' });
    expect(toStepError(new Error('Not connected'), call)).toMatchObject({ code: 'server_unavailable' });
    expect(toStepError(new McpError(OUTPUT_TOO_LARGE, 'output too large: 9 bytes (limit 1), sha256 ab'), call)).toEqual(
      {
        code: 'tool_error',
        retryable: false,
        message: 'gh.t answered with an output too large: 9 bytes (limit 1), sha256 ab; the answer was refused unread.',
      },
    );
    const malformed = z.object({ content: z.array(z.string()) }).safeParse({ content: 1 });
    expect(toStepError(malformed.error, call)).toMatchObject({ code: 'tool_error' });
  });
});

describe('output bound', () => {
  it('keeps small outputs as they are and cuts large ones, recording their size and hash', async () => {
    const { boundOutput } = await import('../../src/mcp/tool-mapping.ts');
    const small = { content: [{ type: 'text', text: 'hello' }] };
    expect(boundOutput(small, 1000)).toBe(small);
    const big = { content: [{ type: 'text', text: 'x'.repeat(1_000_000) }] };
    const cut = boundOutput(big, 10_000);
    expect(JSON.stringify(cut).length).toBeLessThan(10_000);
    expect(cut.truncated?.bytes).toBe(JSON.stringify(big).length);
    expect(cut.truncated?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((cut.content[0] as { text: string }).text).toMatch(
      /^x+\n\[output cut: 1000\d+ bytes in all, sha256 [0-9a-f]{64}; the rest was not kept\]$/,
    );
  });
});

describe('fingerprintOf', () => {
  const writeFile = {
    name: 'write_file',
    description: 'Write a file',
    inputSchema: {
      type: 'object' as const,
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    annotations: { destructiveHint: true, idempotentHint: false },
  };

  it('is unchanged for definitions pinned before canonical JSON became one function (stored pins still match)', () => {
    // Computed by the implementation before issue 27 merged the two canonical JSON functions; runs in databases
    // today hold these, and a changed hash would make every approved run see its tools as changed.
    expect(fingerprintOf(writeFile, { name: 'srv', version: '1.0.0' }).fingerprint).toBe(
      'd34063b95a3b2b4fe98f090777d150bb1d372f2e722067f5f25f464793da1a3c',
    );
    expect(fingerprintOf(writeFile).fingerprint).toBe(
      '0b76797f5134ef17dc948783c264d377ab6dd181e5b951c712377e69c6317506',
    );
  });

  it('ignores key order and changes with any part of the definition', () => {
    const reordered = { annotations: writeFile.annotations, inputSchema: writeFile.inputSchema, name: writeFile.name };
    const same = fingerprintOf({ ...reordered, description: 'Write a file' }).fingerprint;
    expect(same).toBe(fingerprintOf(writeFile).fingerprint);
    expect(fingerprintOf({ ...writeFile, description: 'Write a file!' }).fingerprint).not.toBe(same);
  });
});

import { describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { everythingStdioConfig, freePort, httpServerConfig, mcpConfig, serverConfig } from '../helpers/mcp-servers.ts';

const signal = () => new AbortController().signal;

describe('McpHost when servers fail', () => {
  it('reports a server whose command does not exist while the other one connects; calls to it wait, then say unavailable', async () => {
    const { host, failures } = await McpHost.connect(
      mcpConfig(serverConfig('ghost', { command: '/nonexistent/mcp-server' }), everythingStdioConfig()),
    );
    try {
      expect(failures).toEqual([
        {
          server: 'ghost',
          message: 'MCP server "ghost" could not start: command "/nonexistent/mcp-server" was not found.',
        },
      ]);
      expect(host.listTools().some((t) => t.name === 'everything.echo')).toBe(true);
      expect(host.listTools().some((t) => t.server === 'ghost')).toBe(false);
      const outcome = await host.callTool(
        'everything.echo',
        { message: 'still here' },
        { signal: signal(), timeoutMs: 5000 },
      );
      expect(outcome).toMatchObject({ ok: true });
      // The host keeps trying a server that failed at start, so a call to it waits for it within its timeout.
      expect(await host.callTool('ghost.anything', {}, { signal: signal(), timeoutMs: 200 })).toEqual({
        ok: false,
        error: {
          code: 'server_unavailable',
          retryable: true,
          message:
            'MCP server "ghost" is unavailable: it has not started yet (command "/nonexistent/mcp-server" was not found); ' +
            'not back within 200 ms.',
        },
      });
      expect(await host.callTool('nope.anything', {}, { signal: signal(), timeoutMs: 200 })).toMatchObject({
        ok: false,
        error: { code: 'unknown_tool' },
      });
    } finally {
      await host.close();
    }
  });

  it('quotes the last stderr line of a server that crashes on start', async () => {
    const crash = 'console.error("starting"); console.error("fatal: GITHUB_TOKEN is missing"); process.exit(3)';
    const { host, failures } = await McpHost.connect(
      mcpConfig(serverConfig('crashy', { command: process.execPath, args: ['-e', crash] })),
    );
    await host.close();
    expect(failures).toEqual([
      {
        server: 'crashy',
        message:
          'MCP server "crashy" could not start: it exited during start-up (last stderr: fatal: GITHUB_TOKEN is missing).',
      },
    ]);
  });

  it('gives up on a server that never answers initialize, and leaves no orphan child behind', async () => {
    // Regression: the SDK closed such a child in the background on unref'd timers, so a runner that
    // exited first left it running forever. The child prints its pid so the test can check.
    const script = 'console.error(String(process.pid)); setInterval(() => {}, 1000)';
    const silent = serverConfig('silent', { command: process.execPath, args: ['-e', script] });
    const started = performance.now();
    // Long enough for a loaded machine to start the child and let it print its pid; short next to the default 30 s.
    const { host, failures } = await McpHost.connect(mcpConfig(silent), { connectTimeoutMs: 2000 });
    await host.close();
    expect(performance.now() - started).toBeLessThan(8000);
    const match = /^MCP server "silent" could not start: no answer within 2000 ms \(last stderr: (\d+)\)\.$/.exec(
      failures[0]?.message ?? '',
    );
    expect(match, failures[0]?.message).not.toBeNull();
    expect(() => process.kill(Number(match?.[1]), 0)).toThrow();
  });

  it('reports an HTTP server that refuses the connection', async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp`;
    const { host, failures } = await McpHost.connect(mcpConfig(httpServerConfig(url, { name: 'remote' })));
    await host.close();
    expect(failures).toEqual([
      { server: 'remote', message: `MCP server "remote" could not start at ${url}: fetch failed (ECONNREFUSED).` },
    ]);
  });

  it('turns a server killed mid-call into interrupted, since the tool may have acted (the call is not sent again), and logs it', async () => {
    const logs: string[] = [];
    // A long wait before the first retry: the server stays down for the rest of the test.
    const { host } = await McpHost.connect(mcpConfig(everythingStdioConfig()), {
      logger: (level, message) => logs.push(`${level}: ${message}`),
      reconnect: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    try {
      const pid = host.serverPid('everything');
      expect(pid).toBeTypeOf('number');
      const call = host.callTool(
        'everything.trigger-long-running-operation',
        { duration: 5, steps: 5 },
        { signal: signal(), timeoutMs: 10_000 },
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.kill(pid!, 'SIGKILL');
      const why = 'its process exited (last stderr: Starting default (STDIO) server...)';
      expect(await call).toEqual({
        ok: false,
        error: {
          code: 'interrupted',
          retryable: true,
          message:
            'MCP server "everything" went away while everything.trigger-long-running-operation was running ' +
            `(${why}); the tool may have acted already.`,
        },
      });
      // Until it is back, its tools are out of the catalog and later calls wait for it within their timeout.
      expect(host.listTools()).toEqual([]);
      expect(host.serverPid('everything')).toBeUndefined();
      expect(await host.callTool('everything.echo', { message: 'x' }, { signal: signal(), timeoutMs: 300 })).toEqual({
        ok: false,
        error: {
          code: 'server_unavailable',
          retryable: true,
          message: `MCP server "everything" is unavailable: ${why}; not back within 300 ms.`,
        },
      });
      expect(logs).toContain(`error: MCP server "everything" stopped: ${why}`);
    } finally {
      await host.close();
    }
  });

  it('says calls after close are unavailable rather than throwing', async () => {
    const { host } = await McpHost.connect(mcpConfig(everythingStdioConfig()));
    await host.close();
    expect(
      await host.callTool('everything.echo', { message: 'x' }, { signal: signal(), timeoutMs: 1000 }),
    ).toMatchObject({
      ok: false,
      error: {
        code: 'server_unavailable',
        message: 'MCP server "everything" is unavailable: the MCP host was shut down.',
      },
    });
  });
});

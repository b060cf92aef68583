import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StewardError } from '../../src/engine/errors.ts';
import { loadMcpConfig, parseMcpConfig } from '../../src/mcp/mcp-config.ts';

function parse(json: unknown, env: NodeJS.ProcessEnv = {}) {
  return parseMcpConfig(JSON.stringify(json), 'mcp.json', env);
}

function configError(json: unknown, env: NodeJS.ProcessEnv = {}): string {
  try {
    parse(json, env);
  } catch (err) {
    expect(err).toBeInstanceOf(StewardError);
    expect((err as StewardError).code).toBe('config');
    return (err as Error).message;
  }
  throw new Error('expected a config error');
}

describe('parseMcpConfig', () => {
  it('reads a stdio server and an HTTP server with defaults applied', () => {
    const config = parse({
      mcpServers: {
        fs: { command: 'npx', args: ['-y', 'server-filesystem', '/tmp'], env: { A: '1' }, cwd: '/srv' },
        web: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
      },
    });
    expect(config.servers).toEqual([
      {
        name: 'fs',
        transport: {
          kind: 'stdio',
          command: 'npx',
          args: ['-y', 'server-filesystem', '/tmp'],
          env: { A: '1' },
          cwd: '/srv',
        },
        timeoutMs: 60_000,
        maxTotalTimeoutMs: 600_000,
        allowed: true,
        disabled: false,
        tools: {},
      },
      {
        name: 'web',
        transport: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
        timeoutMs: 60_000,
        maxTotalTimeoutMs: 600_000,
        allowed: true,
        disabled: false,
        tools: {},
      },
    ]);
  });

  it('keeps server and tool overrides', () => {
    const [server] = parse({
      mcpServers: {
        gh: {
          command: 'gh-mcp',
          timeoutMs: 5000,
          maxTotalTimeoutMs: 20_000,
          risk: 'medium',
          allowed: false,
          idempotent: true,
          disabled: true,
          tools: { 'delete.repo': { risk: 'high', allowed: true, timeoutMs: 100, idempotent: false } },
        },
      },
    }).servers;
    expect(server).toMatchObject({
      timeoutMs: 5000,
      maxTotalTimeoutMs: 20_000,
      risk: 'medium',
      allowed: false,
      idempotent: true,
      disabled: true,
      tools: { 'delete.repo': { risk: 'high', allowed: true, timeoutMs: 100, idempotent: false } },
    });
  });

  it('expands ${VAR} in env and headers from the environment', () => {
    const config = parse(
      {
        mcpServers: {
          a: { command: 'x', env: { TOKEN: '${GH_TOKEN}', MIXED: 'pre-${USER_ID}-post', PLAIN: '$HOME' } },
          b: { url: 'http://localhost:1/mcp', headers: { Authorization: 'Bearer ${API_KEY}' } },
        },
      },
      { GH_TOKEN: 'ghp_1', USER_ID: '42', API_KEY: 'k' },
    );
    expect(config.servers[0]?.transport).toMatchObject({
      env: { TOKEN: 'ghp_1', MIXED: 'pre-42-post', PLAIN: '$HOME' },
    });
    expect(config.servers[1]?.transport).toMatchObject({ headers: { Authorization: 'Bearer k' } });
  });

  it('names the variable and its path when a ${VAR} is not set', () => {
    expect(configError({ mcpServers: { gh: { command: 'x', env: { TOKEN: '${GH_TOKEN}' } } } })).toBe(
      'mcp.json: mcpServers.gh.env.TOKEN: environment variable GH_TOKEN is not set',
    );
    expect(configError({ mcpServers: { web: { url: 'http://h/mcp', headers: { 'X-Key': '${KEY}' } } } })).toBe(
      'mcp.json: mcpServers.web.headers.X-Key: environment variable KEY is not set',
    );
  });

  it('turns roots into file:// URIs and keeps a log level; refuses a relative root and an unknown level', () => {
    const { servers } = parse({
      mcpServers: { fs: { command: 'x', roots: ['/srv/data', 'file:///home/ada/my%20notes'], logLevel: 'info' } },
    });
    expect(servers[0]?.roots).toEqual(['file:///srv/data', 'file:///home/ada/my%20notes']);
    expect(servers[0]?.logLevel).toBe('info');
    expect('roots' in (parse({ mcpServers: { fs: { command: 'x' } } }).servers[0] ?? {})).toBe(false);
    expect(configError({ mcpServers: { fs: { command: 'x', roots: ['data'] } } })).toBe(
      'mcp.json: mcpServers.fs.roots[0]: must be an absolute path (or a file:// URI) of a directory the server may use',
    );
    expect(configError({ mcpServers: { fs: { command: 'x', logLevel: 'loud' } } })).toContain(
      'mcpServers.fs.logLevel: must be one of debug, info, notice, warning, error, critical, alert, emergency',
    );
  });

  it("keeps a server's maxConcurrency, and leaves it unset (no limit) when the file does", () => {
    const { servers } = parse({ mcpServers: { api: { url: 'http://h', maxConcurrency: 2 }, fs: { command: 'x' } } });
    expect(servers.map((s) => [s.name, s.maxConcurrency])).toEqual([
      ['api', 2],
      ['fs', undefined],
    ]);
    expect('maxConcurrency' in (servers[1] ?? {})).toBe(false);
  });

  it('does not expand variables of a disabled server', () => {
    const [server] = parse({ mcpServers: { gh: { command: 'x', disabled: true, env: { T: '${UNSET}' } } } }).servers;
    expect(server?.transport).toMatchObject({ env: { T: '${UNSET}' } });
  });

  it.each([
    [
      { mcpServers: { fs: { command: 'x', args: ['a', 1] } } },
      'mcp.json: mcpServers.fs.args[1]: expected string, received number',
    ],
    [
      { mcpServers: { fs: { command: 'x', tools: { 'a b': { risk: 'x' } } } } },
      'mcp.json: mcpServers.fs.tools["a b"].risk: expected one of "low"|"medium"|"high"',
    ],
    [
      { mcpServers: { 'a.b': { command: 'x' } } },
      'mcp.json: mcpServers["a.b"]: server names may use only letters, digits, "_" and "-"',
    ],
    [
      { mcpServers: { steward: { command: 'x' } } },
      'mcp.json: mcpServers.steward: "steward" is the name of Steward\'s own tools; give this server another name',
    ],
    [{ mcpServers: { fs: { command: 'x', timeoutMS: 5 } } }, 'mcp.json: mcpServers.fs: unknown key "timeoutMS"'],
    [
      { mcpServers: { fs: { command: 'x', risk: 'huge' } } },
      'mcp.json: mcpServers.fs.risk: expected one of "low"|"medium"|"high"',
    ],
    [
      { mcpServers: { fs: { command: 'x', timeoutMs: -1 } } },
      'mcp.json: mcpServers.fs.timeoutMs: Too small: expected number to be >0',
    ],
    [
      { mcpServers: { fs: {} } },
      'mcp.json: mcpServers.fs: needs exactly one of "command" (stdio) or "url" (Streamable HTTP)',
    ],
    [
      { mcpServers: { fs: { command: 'x', url: 'http://h' } } },
      'mcp.json: mcpServers.fs: needs exactly one of "command" (stdio) or "url" (Streamable HTTP)',
    ],
    [
      { mcpServers: { web: { url: 'http://h', args: [] } } },
      'mcp.json: mcpServers.web.args: not allowed for a url server',
    ],
    [{ mcpServers: { web: { url: 'ftp://h' } } }, 'mcp.json: mcpServers.web.url: expected an http(s) URL'],
    [
      { mcpServers: { fs: { command: 'x', env: { A: true } } } },
      'mcp.json: mcpServers.fs.env.A: expected string, received boolean',
    ],
    [
      { mcpServers: { fs: { command: 'x', tools: { t: { allowed: 'yes' } } } } },
      'mcp.json: mcpServers.fs.tools.t.allowed: expected boolean, received string',
    ],
    [
      { mcpServers: { fs: { command: 'x', type: 'ftp' } } },
      'mcp.json: mcpServers.fs.type: expected one of "stdio"|"http"|"streamable-http"',
    ],
    [
      { inputs: [] },
      'mcp.json: (top level): no servers: put them under "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)',
    ],
    [
      { mcpServers: { api: { url: 'http://h', tools: { t: { maxConcurrency: 1 } } } } },
      'mcp.json: mcpServers.api.tools.t: unknown key "maxConcurrency"',
    ],
  ])('names the JSON path of a problem: %j', (json, message) => {
    expect(configError(json)).toBe(message);
  });

  it.each([0, -2, 1.5, '2', null])('refuses maxConcurrency %j, naming its path and what it takes', (bad) => {
    expect(configError({ mcpServers: { api: { url: 'http://h', maxConcurrency: bad } } })).toBe(
      'mcp.json: mcpServers.api.maxConcurrency: must be a whole number of calls at once, 1 or more',
    );
  });

  it('says how many more problems there are', () => {
    expect(configError({ mcpServers: { fs: { command: 1, args: 'x' } } })).toMatch(/\(and 1 more problem\)$/);
  });

  it('reports invalid JSON with the source', () => {
    expect(() => parseMcpConfig('{"mcpServers": ', 'conf/mcp.json')).toThrow(/^conf\/mcp\.json: invalid JSON: /);
  });
});

describe('loadMcpConfig', () => {
  it('treats a missing file as no servers, with a warning', async () => {
    const { config, warnings } = await loadMcpConfig('/nonexistent/steward/mcp.json');
    expect(config.servers).toEqual([]);
    expect(warnings).toEqual(['/nonexistent/steward/mcp.json: no MCP config file, so no MCP servers are connected']);
  });

  it('reads a file, and names it in errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'steward-mcp-config-'));
    try {
      const good = join(dir, 'good.json');
      await writeFile(good, JSON.stringify({ mcpServers: { e: { command: 'node' } } }));
      expect((await loadMcpConfig(good)).config.servers.map((s) => s.name)).toEqual(['e']);
      const bad = join(dir, 'bad.json');
      await writeFile(bad, '{ not json');
      await expect(loadMcpConfig(bad)).rejects.toThrow(`${bad}: invalid JSON`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('mcp.json as other hosts write it', () => {
  const places = { cwd: '/work/project', home: '/home/ada' };
  const parseAt = (json: unknown, env: NodeJS.ProcessEnv = {}, at = places) =>
    parseMcpConfig(JSON.stringify(json), 'mcp.json', env, at);
  const errorAt = (json: unknown, env: NodeJS.ProcessEnv = {}, at = places): string => {
    try {
      parseAt(json, env, at);
    } catch (err) {
      expect(err).toBeInstanceOf(StewardError);
      return (err as Error).message;
    }
    throw new Error('expected a config error');
  };

  it("reads Claude Desktop's shape as printed by the reference servers' READMEs", () => {
    const config = parseAt({
      mcpServers: {
        memory: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-memory'],
          env: { MEMORY_FILE_PATH: '/path/to/custom/memory.jsonl' },
        },
      },
      globalShortcut: 'Ctrl+Space',
    });
    expect(config.servers[0]).toMatchObject({
      name: 'memory',
      transport: {
        kind: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-memory'],
        env: { MEMORY_FILE_PATH: '/path/to/custom/memory.jsonl' },
      },
    });
  });

  it("reads VS Code's servers with type, ${workspaceFolder}, numbers in env, and its editor-only keys", () => {
    const config = parseAt(
      {
        servers: {
          fs: {
            type: 'stdio',
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '${workspaceFolder}'],
            env: { PORT: 3000, GONE: null },
            dev: { watch: 'src/**/*.ts', debug: { type: 'node' } },
          },
          github: {
            type: 'http',
            url: 'https://api.githubcopilot.com/mcp/',
            headers: { Authorization: 'Bearer ${env:GITHUB_TOKEN}' },
            gallery: 'https://api.mcp.github.com/v0/servers/x',
            version: '1.0.0',
          },
        },
        inputs: [{ type: 'promptString', id: 'unused', description: 'not referenced', password: true }],
      },
      { GITHUB_TOKEN: 'ghp_secret' },
    );
    expect(config.servers.map((s) => s.transport)).toEqual([
      {
        kind: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/work/project'],
        env: { PORT: '3000' },
      },
      { kind: 'http', url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer ghp_secret' } },
    ]);
  });

  it("reads Cursor's shape: a url with headers, ${env:NAME} and ${userHome}", () => {
    const config = parseAt(
      {
        mcpServers: {
          context7: { url: 'https://mcp.context7.com/mcp', headers: { CONTEXT7_API_KEY: '${env:CONTEXT7_API_KEY}' } },
          notes: { command: 'notes-mcp', args: ['--dir', '${userHome}/notes'], env: { KEY: '${env:NOTES_KEY}' } },
        },
      },
      { CONTEXT7_API_KEY: 'c7', NOTES_KEY: 'n' },
    );
    expect(config.servers.map((s) => s.transport)).toEqual([
      { kind: 'http', url: 'https://mcp.context7.com/mcp', headers: { CONTEXT7_API_KEY: 'c7' } },
      { kind: 'stdio', command: 'notes-mcp', args: ['--dir', '/home/ada/notes'], env: { KEY: 'n' } },
    ]);
  });

  it("reads Claude Code's ${NAME:-default} in env and headers, and refuses it in args", () => {
    const config = parseAt(
      {
        mcpServers: {
          api: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${API_KEY}' } },
          db: { command: 'db-mcp', env: { DB_HOST: '${DB_HOST:-localhost}', DB_USER: '${DB_USER:-app}' } },
        },
      },
      { API_KEY: 'k', DB_USER: 'ada' },
    );
    expect(config.servers.map((s) => s.transport)).toMatchObject([
      { headers: { Authorization: 'Bearer k' } },
      { env: { DB_HOST: 'localhost', DB_USER: 'ada' } },
    ]);
    expect(errorAt({ mcpServers: { db: { command: 'db-mcp', args: ['${DB_URL:-postgres://x}'] } } })).toMatch(
      /^mcp\.json: mcpServers\.db\.args\[0\]: Steward expands environment variables only in "env" and "headers"/,
    );
  });

  it("reads an envFile relative to where Steward runs; the entry's own env wins", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'steward-envfile-'));
    try {
      await writeFile(
        join(dir, '.env'),
        '# tokens\nexport API_TOKEN="tok en"\nREGION=eu # where\nQUOTED=\'a=b\'\n\nSHARED=from-file\n',
      );
      const config = parseAt(
        {
          servers: {
            api: { type: 'stdio', command: 'api-mcp', envFile: '${workspaceFolder}/.env', env: { SHARED: 'mine' } },
          },
        },
        {},
        { cwd: dir, home: '/home/ada' },
      );
      expect(config.servers[0]?.transport).toMatchObject({
        env: { API_TOKEN: 'tok en', REGION: 'eu', QUOTED: 'a=b', SHARED: 'mine' },
      });
      await writeFile(join(dir, 'bad.env'), 'TOKEN=secret-value\nnot a line\n');
      const bad = errorAt({ mcpServers: { api: { command: 'x', envFile: 'bad.env' } } }, {}, { cwd: dir, home: '/' });
      expect(bad).toBe(`mcp.json: mcpServers.api.envFile: ${join(dir, 'bad.env')} line 2 is not NAME=value`);
      expect(bad).not.toContain('secret-value');
      expect(
        errorAt({ mcpServers: { api: { command: 'x', envFile: 'none.env' } } }, {}, { cwd: dir, home: '/' }),
      ).toMatch(/^mcp\.json: mcpServers\.api\.envFile: cannot read .*none\.env: ENOENT/);
      // A disabled server's file is not read: it may not exist on this machine.
      expect(
        parseAt({ mcpServers: { off: { command: 'x', envFile: 'none.env', disabled: true } } }).servers,
      ).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [
      { servers: { old: { type: 'sse', url: 'https://h.example/sse' } } },
      'mcp.json: servers.old.type: the SSE transport (deprecated in the MCP spec since 2025-03-26) is not supported: use the server\'s Streamable HTTP endpoint (often /mcp where SSE is /sse) with "type": "http"',
    ],
    [
      {
        servers: {
          gh: { type: 'http', url: 'https://h.example/mcp', headers: { Authorization: 'Bearer ${input:token}' } },
        },
      },
      'mcp.json: servers.gh.headers.Authorization: ${input:token} is a value VS Code asks a person for when it starts the server; Steward starts servers unattended: put the value in an environment variable and write ${env:NAME} in "env" or "headers"',
    ],
    [
      { mcpServers: { db: { command: 'db-mcp', args: ['--password', '${env:DB_PASSWORD}'] } } },
      'mcp.json: mcpServers.db.args[1]: Steward expands environment variables only in "env" and "headers", so a secret never sits on a command line or in a URL: move the value there',
    ],
    [
      { servers: { fs: { type: 'stdio', command: 'x', sandboxEnabled: true } } },
      'mcp.json: servers.fs.sandboxEnabled: Steward does not sandbox servers, and a server must not run believing it is: remove it, or run the server in a container Steward starts',
    ],
    [
      { servers: { web: { type: 'stdio', url: 'https://h.example/mcp' } } },
      'mcp.json: servers.web.type: "stdio" needs "command" (and no "url")',
    ],
    [
      { servers: { fs: { type: 'http', command: 'x' } } },
      'mcp.json: servers.fs.type: "http" needs "url" (and no "command")',
    ],
    [
      { servers: { a: { command: 'x' } }, mcpServers: { b: { command: 'y' } } },
      'mcp.json: servers: give the servers once, under "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)',
    ],
    [{ servers: { fs: { command: 'x', timeoutMS: 5 } } }, 'mcp.json: servers.fs: unknown key "timeoutMS"'],
  ])('refuses what cannot work, in one sentence: %j', (json, message) => {
    expect(errorAt(json)).toBe(message);
  });
});

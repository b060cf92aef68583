/**
 * mcp.json as other hosts write it, read into Steward's own shape before it is checked: Claude Desktop's, Claude Code's
 * and Cursor's `mcpServers`, VS Code's `servers` (with `type` and `envFile`), their variables (`${env:NAME}`,
 * `${NAME:-default}`, `${workspaceFolder}`, `${userHome}`), and keys that only matter to an editor. What cannot work unattended is refused with one sentence.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { StewardError } from '../engine/errors.ts';
import { formatPath } from './config-format.ts';

/** Where paths and `${workspaceFolder}` / `${userHome}` point: the directory Steward runs in, and the user's home. */
export interface HostPlaces {
  cwd: string;
  home: string;
}

/** The places of this process. */
export function processPlaces(): HostPlaces {
  return { cwd: process.cwd(), home: homedir() };
}

// Keys an editor writes that change nothing for a server Steward runs: VS Code's `dev` (watch and debug a server
// under development), and `gallery` / `version` (where an installed entry came from).
const EDITOR_ONLY = ['dev', 'gallery', 'version'];
const INPUT_REF = /\$\{input:([^}]*)\}/;
const ANY_REF = /\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/;

/**
 * The file's JSON in Steward's shape: `mcpServers` whatever the host called it (`rootKey`, for messages), each entry
 * without editor-only keys, with `${workspaceFolder}` and `${userHome}` filled in and numeric `env` values as text.
 */
export function fromHostShape(json: unknown, source: string, places: HostPlaces): { json: unknown; rootKey: string } {
  if (!isObject(json)) return { json, rootKey: 'mcpServers' };
  const fail = (path: PropertyKey[], why: string): never => {
    throw new StewardError('config', `${source}: ${formatPath(path)}: ${why}`);
  };
  if ('servers' in json && 'mcpServers' in json) {
    fail(['servers'], 'give the servers once, under "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)');
  }
  const rootKey = 'servers' in json ? 'servers' : 'mcpServers';
  const { [rootKey]: servers, ...rest } = json;
  if (servers === undefined) {
    fail([], 'no servers: put them under "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)');
  }
  if (!isObject(servers)) return { json: { ...rest, mcpServers: servers }, rootKey };
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers)) {
    out[name] = isObject(entry) ? fromHostEntry(entry, [rootKey, name], fail, places) : entry;
  }
  return { json: { ...rest, mcpServers: out }, rootKey };
}

function fromHostEntry(
  entry: Record<string, unknown>,
  path: string[],
  fail: (path: PropertyKey[], why: string) => never,
  places: HostPlaces,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) if (!EDITOR_ONLY.includes(key)) out[key] = value;
  if (entry.type === 'sse') {
    fail(
      [...path, 'type'],
      'the SSE transport (deprecated in the MCP spec since 2025-03-26) is not supported: use the server\'s Streamable HTTP endpoint (often /mcp where SSE is /sse) with "type": "http"',
    );
  }
  if (entry.sandboxEnabled === true || entry.sandbox !== undefined) {
    const key = entry.sandboxEnabled === true ? 'sandboxEnabled' : 'sandbox';
    fail(
      [...path, key],
      'Steward does not sandbox servers, and a server must not run believing it is: remove it, or run the server in a container Steward starts',
    );
  }
  delete out.sandboxEnabled;
  for (const [key, value] of Object.entries(entry)) {
    for (const [at, text] of strings(value, [...path, key])) {
      const input = INPUT_REF.exec(text);
      if (input) {
        fail(
          at,
          `\${input:${input[1]}} is a value VS Code asks a person for when it starts the server; Steward starts servers unattended: put the value in an environment variable and write \${env:NAME} in "env" or "headers"`,
        );
      }
    }
  }
  // Not secrets, and where a filesystem server's directories usually come from: filled in everywhere.
  const fill = (text: string) =>
    text.replaceAll('${workspaceFolder}', places.cwd).replaceAll('${userHome}', places.home);
  for (const key of ['command', 'cwd', 'envFile', 'url']) if (typeof out[key] === 'string') out[key] = fill(out[key]);
  for (const key of ['args', 'roots'])
    if (Array.isArray(out[key])) out[key] = out[key].map((a: unknown) => (typeof a === 'string' ? fill(a) : a));
  for (const key of ['command', 'args', 'cwd', 'url']) {
    for (const [at, text] of strings(out[key], [...path, key])) {
      if (ANY_REF.test(text)) {
        fail(
          at,
          'Steward expands environment variables only in "env" and "headers", so a secret never sits on a command line or in a URL: move the value there',
        );
      }
    }
  }
  for (const key of ['env', 'headers']) {
    const map = out[key];
    if (!isObject(map)) continue;
    const text: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(map)) {
      // VS Code allows numbers, and null to unset an inherited variable (a child here inherits none).
      if (v === null) continue;
      text[k] = typeof v === 'number' ? String(v) : typeof v === 'string' ? fill(v) : v;
    }
    out[key] = text;
  }
  return out;
}

/**
 * Reads a stdio server's `envFile` (dotenv lines: `NAME=value`, `export NAME=value`, `#` comments, values in single
 * or double quotes), relative to the directory Steward runs in. Its values are taken as written. A failure names the
 * file and the line, never a value.
 */
export function readEnvFile(file: string, at: string, source: string, places: HostPlaces): Record<string, string> {
  const path = resolve(places.cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new StewardError('config', `${source}: ${at}: cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
  const out: Record<string, string> = {};
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) {
      throw new StewardError('config', `${source}: ${at}: ${path} line ${index + 1} is not NAME=value`);
    }
    const value = match[2] ?? '';
    const quoted = /^(['"])(.*)\1$/.exec(value);
    out[match[1] as string] = quoted
      ? quoted[1] === '"'
        ? (quoted[2] ?? '').replaceAll('\\n', '\n')
        : (quoted[2] ?? '')
      : value.replace(/\s+#.*$/, '');
  }
  return out;
}

/** Every string inside a value, with its path. */
function strings(value: unknown, path: PropertyKey[]): [PropertyKey[], string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, [...path, i]));
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => strings(v, [...path, k]));
  return [];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

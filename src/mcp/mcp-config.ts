/**
 * The MCP config file in the format desktop clients use (`{"mcpServers": {...}}`, or as VS Code and Cursor write it:
 * `host-shapes.ts`), plus Steward's per-server and per-tool policy overrides, parsed into plain values with defaults
 * applied.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { BUILTIN_SERVER } from '../engine/run/earlier-turns.ts';
import { StewardError } from '../engine/errors.ts';
import type { RiskLevel } from '../engine/types.ts';
import { expandEnvRefs, formatIssue, formatPath } from './config-format.ts';
import { fromHostShape, processPlaces, readEnvFile, type HostPlaces } from './host-shapes.ts';

/** Operator policy for one tool; every field left out falls back to the server's value. */
export interface ToolOverride {
  risk?: RiskLevel;
  allowed?: boolean;
  timeoutMs?: number;
  maxTotalTimeoutMs?: number;
  idempotent?: boolean;
  sensitive?: boolean;
  trustedRefFields?: string[];
  /** The operator's word on the tool's `readOnlyHint` and `openWorldHint`, over its annotations. */
  readOnly?: boolean;
  openWorld?: boolean;
}

/**
 * OAuth 2.1 for a Streamable HTTP server (the MCP authorization spec). `owner` is whose connection a call uses:
 * the workspace's one connection, or the person's who asked. `grant` is how tokens are got: by a person authorizing
 * at the authorization server (`authorization_code`, with PKCE) or, for a machine connection, `client_credentials`.
 * The client is the pre-registered `clientId` (and `clientSecret`), a client ID metadata document at
 * `clientMetadataUrl`, or else registered dynamically.
 */
export interface McpAuthConfig {
  owner: 'workspace' | 'person';
  grant: 'authorization_code' | 'client_credentials';
  clientId?: string;
  clientSecret?: string;
  /** A PEM private key: the client proves itself with a signed JWT (private_key_jwt) instead of a secret. */
  privateKey?: string;
  /** The JWT's signing algorithm (ES256, RS256, …). */
  algorithm?: string;
  /** The authorization server the pre-registered client belongs to; its credentials go to no other. */
  issuer?: string;
  clientMetadataUrl?: string;
  scope?: string;
  /** Where the authorization server sends the person back to; Steward's own origin by default. */
  redirectUrl?: string;
}

/** How to reach a server: a child process over stdio, or a Streamable HTTP endpoint. */
export type McpTransportConfig =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: string; headers: Record<string, string>; auth?: McpAuthConfig };

/** One configured server with defaults applied and `${VAR}` references already expanded. */
export interface McpServerConfig {
  name: string;
  transport: McpTransportConfig;
  timeoutMs: number;
  maxTotalTimeoutMs: number;
  risk?: RiskLevel;
  allowed: boolean;
  idempotent?: boolean;
  /** The operator's word on every tool's `readOnlyHint` and `openWorldHint` (a tool's own entry wins). */
  readOnly?: boolean;
  openWorld?: boolean;
  disabled: boolean;
  /** Most calls the server gets at once, from all runs together; unset: no limit. */
  maxConcurrency?: number;
  tools: Record<string, ToolOverride>;
  /** The directories the server may use, as `file://` URIs, answered on `roots/list`; unset: no roots capability. */
  roots?: string[];
  /** The least severe of the server's log messages (`notifications/message`) that reach Steward's log (default warning). */
  logLevel?: McpLogLevel;
}

/** MCP's log levels (RFC 5424's), least severe first. */
export const MCP_LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
/** One of MCP's log levels. */
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];
/** A server's log messages below this level are not asked for, and dropped if sent anyway. */
export const DEFAULT_LOG_LEVEL: McpLogLevel = 'warning';

/** The whole MCP config: servers in file order. */
export interface McpConfig {
  servers: McpServerConfig[];
}

/** Default per-call timeout, the SDK's own default. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default hard cap on a call that keeps reporting progress. */
export const DEFAULT_MAX_TOTAL_TIMEOUT_MS = 600_000;

// Plans name tools `<server>.<tool>` and split at the first dot, so a dot in a server name would be ambiguous.
const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

const riskSchema = z.enum(['low', 'medium', 'high']);
const msSchema = z.number().int().positive();
const CONCURRENCY = 'must be a whole number of calls at once, 1 or more';
const concurrencySchema = z.number({ error: CONCURRENCY }).int({ error: CONCURRENCY }).positive({ error: CONCURRENCY });
const stringMap = z.record(z.string(), z.string());

const toolOverrideSchema = z.strictObject({
  risk: riskSchema.optional(),
  allowed: z.boolean().optional(),
  timeoutMs: msSchema.optional(),
  maxTotalTimeoutMs: msSchema.optional(),
  idempotent: z.boolean().optional(),
  sensitive: z.boolean().optional(),
  trustedRefFields: z.array(z.string().min(1)).optional(),
  readOnly: z.boolean().optional(),
  openWorld: z.boolean().optional(),
});

/**
 * Whether a person authorizes the server's connection in their browser: each person their own (`"auth": "person"`),
 * or an approver once for the workspace (`"auth": "workspace"` without client credentials).
 */
export function connectsInBrowser(server: McpServerConfig): 'person' | 'workspace' | undefined {
  const auth = server.transport.kind === 'http' ? server.transport.auth : undefined;
  if (!auth || auth.grant !== 'authorization_code') return undefined;
  return auth.owner;
}

/** True for an https URL, or an http one whose host is the loopback interface (where TLS protects nothing). */
export function isSecureOrLoopback(url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === 'https:') return true;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return parsed.protocol === 'http:' && (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host));
}

const SECURE = 'must be an https URL (http only to localhost or 127.0.0.1)';
const secureUrl = z.string().refine(isSecureOrLoopback, { error: SECURE });

const oauthSchema = z.strictObject({
  grant: z.enum(['authorization_code', 'client_credentials']).optional(),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  privateKey: z.string().min(1).optional(),
  algorithm: z
    .string()
    .regex(/^(RS|PS|ES)(256|384|512)$/, { error: 'expected RS256, ES256, PS256 or the like' })
    .optional(),
  issuer: secureUrl.optional(),
  clientMetadataUrl: z.url({ protocol: /^https$/, error: 'must be an https URL' }).optional(),
  scope: z.string().min(1).optional(),
  redirectUrl: secureUrl.optional(),
});

const MAX_ROOTS = 50;
// A root is a directory on this machine, written as a path (or a file:// URI); the server is told it as a URI.
const rootSchema = z
  .string()
  .min(1)
  .refine((r) => isAbsolute(r.startsWith('file://') ? safeFilePath(r) : r), {
    error: 'must be an absolute path (or a file:// URI) of a directory the server may use',
  });

const serverSchema = z
  .strictObject({
    // Some clients write the transport kind out; SSE (the deprecated HTTP transport) is refused in host-shapes.ts.
    type: z.enum(['stdio', 'http', 'streamable-http']).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    envFile: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
    headers: stringMap.optional(),
    auth: z.enum(['workspace', 'person'], { error: 'must be "workspace" or "person"' }).optional(),
    oauth: oauthSchema.optional(),
    timeoutMs: msSchema.optional(),
    maxTotalTimeoutMs: msSchema.optional(),
    risk: riskSchema.optional(),
    allowed: z.boolean().optional(),
    idempotent: z.boolean().optional(),
    readOnly: z.boolean().optional(),
    openWorld: z.boolean().optional(),
    disabled: z.boolean().optional(),
    maxConcurrency: concurrencySchema.optional(),
    tools: z.record(z.string().min(1), toolOverrideSchema).optional(),
    roots: z
      .array(rootSchema)
      .max(MAX_ROOTS, { error: `at most ${MAX_ROOTS} roots` })
      .optional(),
    logLevel: z.enum(MCP_LOG_LEVELS, { error: `must be one of ${MCP_LOG_LEVELS.join(', ')}` }).optional(),
  })
  .superRefine((s, ctx) => {
    if ((s.command === undefined) === (s.url === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'needs exactly one of "command" (stdio) or "url" (Streamable HTTP)' });
    }
    const kind = s.url !== undefined ? 'url' : 'command';
    const misplaced =
      s.url !== undefined
        ? ['args', 'env', 'envFile', 'cwd']
        : s.command !== undefined
          ? ['headers', 'auth', 'oauth']
          : [];
    for (const key of misplaced) {
      if (key in s) ctx.addIssue({ code: 'custom', path: [key], message: `not allowed for a ${kind} server` });
    }
    if (s.type === 'stdio' && s.url !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: '"stdio" needs "command" (and no "url")' });
    }
    if (s.type !== undefined && s.type !== 'stdio' && s.command !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `"${s.type}" needs "url" (and no "command")` });
    }
    if (s.url !== undefined) checkAuth(s, ctx);
  });

/** The rules between `auth`, `oauth`, `headers` and `url` that no single field's schema can see. */
function checkAuth(
  s: { url?: string; headers?: Record<string, string>; auth?: string; oauth?: z.infer<typeof oauthSchema> },
  ctx: z.RefinementCtx,
): void {
  const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (s.oauth && !s.auth) issue(['oauth'], 'needs "auth": "workspace" or "auth": "person" beside it');
  if (!s.auth) return;
  // Bearer tokens sent in clear could be replayed by anyone on the path (OAuth 2.1, section 1.5).
  if (s.url && !isSecureOrLoopback(s.url)) issue(['url'], `with "auth", ${SECURE}`);
  if (Object.keys(s.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) {
    issue(['headers', 'Authorization'], 'not allowed with "auth": the OAuth token is the Authorization header');
  }
  const o = s.oauth ?? {};
  if (o.clientSecret && !o.clientId) issue(['oauth', 'clientSecret'], 'needs "clientId" beside it');
  if (o.privateKey && !o.clientId) issue(['oauth', 'privateKey'], 'needs "clientId" beside it');
  if (o.privateKey && o.clientSecret) issue(['oauth', 'privateKey'], 'give "clientSecret" or "privateKey", not both');
  if (o.grant === 'client_credentials') {
    if (!o.clientId || !(o.clientSecret || o.privateKey)) {
      issue(['oauth'], '"grant": "client_credentials" needs "clientId" and "clientSecret" (or "privateKey")');
    }
    if (s.auth === 'person') {
      issue(['oauth', 'grant'], '"client_credentials" acts as the workspace, not as a person: use "auth": "workspace"');
    }
  }
}

const fileSchema = z.looseObject({
  mcpServers: z.record(
    z
      .string()
      .regex(SERVER_NAME, { error: 'server names may use only letters, digits, "_" and "-"' })
      .refine((name) => name !== BUILTIN_SERVER, {
        error: `"${BUILTIN_SERVER}" is the name of Steward's own tools; give this server another name`,
      }),
    serverSchema,
  ),
});

/**
 * Parses MCP config text; throws `StewardError('config')` whose message names the file and the JSON path. `places`:
 * where relative `envFile` paths, `${workspaceFolder}` and `${userHome}` point (this process's by default).
 */
export function parseMcpConfig(
  text: string,
  source: string,
  env: NodeJS.ProcessEnv = process.env,
  places: HostPlaces = processPlaces(),
): McpConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new StewardError('config', `${source}: invalid JSON: ${(cause as Error).message}`, { cause });
  }
  const { json, rootKey } = fromHostShape(raw, source, places);
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const [first, ...rest] = parsed.error.issues;
    const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
    // Named as the file names it: `servers.x` in a VS Code file.
    const named =
      first && first.path[0] === 'mcpServers' ? { ...first, path: [rootKey, ...first.path.slice(1)] } : first;
    throw new StewardError('config', `${source}: ${named ? formatIssue(named) : 'invalid'}${more}`);
  }
  const servers = Object.entries(parsed.data.mcpServers).map(([name, s]): McpServerConfig => {
    const disabled = s.disabled ?? false;
    // A disabled server's variables may legitimately be unset, so only enabled servers expand theirs.
    const expand = (map: Record<string, string> | undefined, key: string) =>
      disabled ? { ...map } : expandEnvRefs(map ?? {}, [rootKey, name, key], source, env);
    // The file's values first: `env` in the entry wins, as in VS Code. Read only for a server that will start.
    const fromFile = () =>
      s.envFile && !disabled ? readEnvFile(s.envFile, formatPath([rootKey, name, 'envFile']), source, places) : {};
    const expandOauth = (oauth: z.infer<typeof oauthSchema> | undefined, server: string) =>
      expandOauthWith(oauth, server, source, env);
    const transport: McpTransportConfig =
      s.url !== undefined
        ? {
            kind: 'http',
            url: s.url,
            headers: expand(s.headers, 'headers'),
            ...(s.auth ? { auth: toAuthConfig(s.auth, disabled ? { ...s.oauth } : expandOauth(s.oauth, name)) } : {}),
          }
        : {
            kind: 'stdio',
            command: s.command ?? '',
            args: s.args ?? [],
            env: { ...fromFile(), ...expand(s.env, 'env') },
            ...(s.cwd ? { cwd: s.cwd } : {}),
          };
    return {
      name,
      transport,
      timeoutMs: s.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxTotalTimeoutMs: s.maxTotalTimeoutMs ?? DEFAULT_MAX_TOTAL_TIMEOUT_MS,
      ...(s.risk ? { risk: s.risk } : {}),
      allowed: s.allowed ?? true,
      ...(s.idempotent !== undefined ? { idempotent: s.idempotent } : {}),
      ...(s.readOnly !== undefined ? { readOnly: s.readOnly } : {}),
      ...(s.openWorld !== undefined ? { openWorld: s.openWorld } : {}),
      disabled,
      ...(s.maxConcurrency !== undefined ? { maxConcurrency: s.maxConcurrency } : {}),
      tools: s.tools ?? {},
      ...(s.roots ? { roots: s.roots.map(toRootUri) } : {}),
      ...(s.logLevel ? { logLevel: s.logLevel } : {}),
    };
  });
  return { servers };
}

/** A root as the server is told it: a `file://` URI of the normalized absolute path. */
function toRootUri(root: string): string {
  return pathToFileURL(root.startsWith('file://') ? safeFilePath(root) : root).href;
}

/** The path of a file:// URI; '' (not absolute) when it is not one this machine can use. */
function safeFilePath(uri: string): string {
  try {
    return fileURLToPath(uri);
  } catch {
    return '';
  }
}

/** `${VAR}` expanded in `clientId`, `clientSecret` and `privateKey` (URLs are checked as written, not expanded). */
function expandOauthWith(
  oauth: z.infer<typeof oauthSchema> | undefined,
  name: string,
  source: string,
  env: NodeJS.ProcessEnv,
): z.infer<typeof oauthSchema> {
  const client: Record<string, string> = {};
  if (oauth?.clientId) client.clientId = oauth.clientId;
  if (oauth?.clientSecret) client.clientSecret = oauth.clientSecret;
  if (oauth?.privateKey) client.privateKey = oauth.privateKey;
  return { ...oauth, ...expandEnvRefs(client, ['mcpServers', name, 'oauth'], source, env) };
}

function toAuthConfig(owner: 'workspace' | 'person', o: z.infer<typeof oauthSchema>): McpAuthConfig {
  return {
    owner,
    grant: o.grant ?? 'authorization_code',
    ...(o.clientId ? { clientId: o.clientId } : {}),
    ...(o.clientSecret ? { clientSecret: o.clientSecret } : {}),
    ...(o.privateKey ? { privateKey: o.privateKey, algorithm: o.algorithm ?? 'ES256' } : {}),
    ...(o.issuer ? { issuer: o.issuer } : {}),
    ...(o.clientMetadataUrl ? { clientMetadataUrl: o.clientMetadataUrl } : {}),
    ...(o.scope ? { scope: o.scope } : {}),
    ...(o.redirectUrl ? { redirectUrl: o.redirectUrl } : {}),
  };
}

/** Reads and parses a config file; a missing file means no servers, reported as a warning. */
export async function loadMcpConfig(path: string): Promise<{ config: McpConfig; warnings: string[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') {
      return { config: { servers: [] }, warnings: [`${path}: no MCP config file, so no MCP servers are connected`] };
    }
    throw new StewardError('config', `${path}: cannot read MCP config: ${(cause as Error).message}`, { cause });
  }
  return { config: parseMcpConfig(text, path), warnings: [] };
}

/**
 * Plausible tools of six servers nobody in the bench calls (a code host, an issue tracker, a chat workspace, a
 * database, a cluster, a document store), built from fixed word lists so every run gets the same catalog. They
 * stand in for what people connect in practice: servers of 50–100 tools each, with words that overlap the bench's
 * own tools (read, file, text, message, send, wait, sum, list). Only their definitions matter: the planner's prompt
 * is built from `ToolInfo` values, so they are never connected.
 */
import type { ToolInfo } from '../src/engine/types.ts';

type Verb = 'list' | 'get' | 'create' | 'update' | 'delete' | 'search';

interface FakeServer {
  name: string;
  /** How the server spells its tool names. */
  style: 'snake' | 'kebab' | 'camel';
  context: string;
  idField: string;
  resources: string[];
}

const list = (words: string) => words.split(', ');

const SERVERS: FakeServer[] = [
  {
    name: 'github',
    style: 'snake',
    context: 'a repository (owner/repo)',
    idField: 'number',
    resources: list(
      'issue, pull request, branch, commit, release, workflow run, gist, label, milestone, review comment, deployment, check run, discussion, webhook, collaborator, file content',
    ),
  },
  {
    name: 'jira',
    style: 'camel',
    context: 'a Jira project (project key)',
    idField: 'issueKey',
    resources: list(
      'issue, sprint, board, epic, worklog, comment, attachment, version, component, filter, transition, watcher, issue link, dashboard, priority, custom field',
    ),
  },
  {
    name: 'chat',
    style: 'snake',
    context: 'the workspace (channel id)',
    idField: 'ts',
    resources: list(
      'message, channel, thread reply, reaction, reminder, bookmark, pinned message, user group, scheduled message, file, emoji, user status, canvas, call, direct message, workflow',
    ),
  },
  {
    name: 'warehouse',
    style: 'snake',
    context: 'a database (schema name)',
    idField: 'name',
    resources: list(
      'table, row, index, view, saved query, migration, backup, role, extension, sequence, trigger, materialized view, column, constraint, aggregate report, slow query',
    ),
  },
  {
    name: 'cluster',
    style: 'kebab',
    context: 'a Kubernetes namespace',
    idField: 'name',
    resources: list(
      'pod, deployment, service, namespace, node, config map, secret, job, cron job, ingress, volume claim, event, pod log, rollout, autoscaler, stateful set',
    ),
  },
  {
    name: 'docs',
    style: 'camel',
    context: 'a shared drive (drive id)',
    idField: 'documentId',
    resources: list(
      'document, folder, spreadsheet, presentation, permission, comment, revision, file, shared drive, form, text export, template, label, shortcut, activity, suggestion',
    ),
  },
];

const VERBS: Verb[] = ['list', 'get', 'create', 'update', 'delete', 'search'];

const DESCRIBE: Record<Verb, (r: string, ctx: string) => string> = {
  list: (r, ctx) =>
    `List ${r}s in ${ctx}, newest first. Supports paging with cursor and per_page (at most 100). Returns the id, name, state and timestamps of each ${r}.`,
  get: (r, ctx) =>
    `Get one ${r} from ${ctx} by its identifier, with all of its fields, its author and the time it was last changed.`,
  create: (r, ctx) =>
    `Create a new ${r} in ${ctx}. Fails if one with the same name exists. Returns the created ${r} with its new identifier.`,
  update: (r, ctx) =>
    `Update fields of an existing ${r} in ${ctx}. Only the fields given are changed; the others keep their values.`,
  delete: (r, ctx) => `Delete a ${r} from ${ctx}. This cannot be undone; set confirm to true.`,
  search: (r, ctx) =>
    `Search ${r}s in ${ctx} with a free-text query. Matches titles and bodies; results are sorted by relevance unless sort is given.`,
};

/** `count` distractor tools spread over the six servers, the same every time. */
export function distractorTools(count: number): ToolInfo[] {
  const all: ToolInfo[] = [];
  for (const server of SERVERS) {
    for (const resource of server.resources) {
      for (const verb of VERBS) all.push(toolFor(server, verb, resource));
    }
  }
  // Deal the tools out server by server so any count keeps all six servers and a mix of verbs.
  const perServer = Math.ceil(count / SERVERS.length);
  return SERVERS.flatMap((s) => all.filter((t) => t.server === s.name).slice(0, perServer)).slice(0, count);
}

function toolFor(server: FakeServer, verb: Verb, resource: string): ToolInfo {
  const tool = spell(server.style, [verb, ...resource.split(' ')]);
  const title = `${verb[0]?.toUpperCase()}${verb.slice(1)} ${resource}`;
  const description = DESCRIBE[verb](resource, server.context);
  const inputSchema = schemaFor(verb, server.idField);
  const readOnly = verb === 'list' || verb === 'get' || verb === 'search';
  return {
    name: `${server.name}.${tool}`,
    server: server.name,
    tool,
    description,
    inputSchema,
    annotations: { readOnlyHint: readOnly, destructiveHint: verb === 'delete', openWorldHint: false },
    policy: { allowed: true, timeoutMs: 30_000 },
    fingerprint: `bench-${server.name}-${tool}`,
    definition: { name: tool, title, description, inputSchema: inputSchema as never },
  };
}

function spell(style: FakeServer['style'], words: string[]): string {
  if (style === 'snake') return words.join('_');
  if (style === 'kebab') return words.join('-');
  return words.map((w, i) => (i === 0 ? w : `${w[0]?.toUpperCase()}${w.slice(1)}`)).join('');
}

// Shaped as zod-to-json-schema writes them, as most servers in the wild do: `$schema` and `additionalProperties`.
function schemaFor(verb: Verb, idField: string): Record<string, unknown> {
  const id = { [idField]: { type: 'string', description: 'Identifier of the item' } };
  const scope = { scope: { type: 'string', description: 'Where to look (see the tool description)' } };
  const props: Record<Verb, Record<string, unknown>> = {
    list: {
      ...scope,
      state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open' },
      per_page: { type: 'number', maximum: 100 },
      cursor: { type: 'string' },
    },
    get: { ...scope, ...id },
    create: {
      ...scope,
      name: { type: 'string' },
      body: { type: 'string', description: 'Text, Markdown allowed' },
      labels: { type: 'array', items: { type: 'string' } },
    },
    update: {
      ...scope,
      ...id,
      fields: { type: 'object', additionalProperties: true, description: 'Fields to change' },
    },
    delete: { ...scope, ...id, confirm: { type: 'boolean' } },
    search: {
      ...scope,
      query: { type: 'string' },
      sort: { type: 'string', enum: ['relevance', 'created', 'updated'] },
      per_page: { type: 'number', maximum: 100 },
    },
  };
  const required =
    verb === 'list' || verb === 'search' ? ['scope'] : verb === 'create' ? ['scope', 'name'] : ['scope', idField];
  return {
    type: 'object',
    properties: props[verb],
    required: verb === 'search' ? [...required, 'query'] : required,
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  };
}

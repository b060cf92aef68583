/**
 * The Assistants bootstrap file (`STEWARD_ASSISTANTS_FILE`, default `./assistants.json` when it exists), read at start
 * and checked whole before anything is written: a bad entry refuses start-up with one sentence naming it. Each entry
 * is then applied as an upsert, audited as changed by `file` (see `AssistantStore.applyDefinitions`).
 *
 *   { "assistants": [ { "name": "ops", "purpose": "…", "instructions": "…", "models": { "planner": "…" },
 *                       "default": "deny", "grants": { "audit": "allow", "audit.delete_log": "deny" } } ] }
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ASSISTANT_NAME, type AssistantDefinition } from './engine/assistant/assistants.ts';
import { StewardError } from './engine/errors.ts';
import { formatIssue } from './mcp/config-format.ts';

/** The file read when `STEWARD_ASSISTANTS_FILE` names none (used only when it exists). */
export const DEFAULT_ASSISTANTS_FILE = './assistants.json';

const effect = z.enum(['allow', 'deny'], { error: 'must be "allow" or "deny"' });
// A grant's key is a server (`audit`) or one of its tools (`audit.read_log`); server names have no dot.
const grantKey = z.string().regex(/^[A-Za-z0-9_-]+(\.\S+)?$/, { error: 'must be a server or server.tool' });

const assistantSchema = z.strictObject({
  name: z.string().regex(ASSISTANT_NAME, {
    error: 'must be a lower-case letter followed by up to 39 lower-case letters, digits, "-" or "_"',
  }),
  purpose: z.string().trim().min(1).max(1_000),
  instructions: z.string().max(8_000).default(''),
  models: z
    .record(z.string().regex(/^[a-z_]+$/, { error: 'roles are lower-case words' }), z.string().min(1))
    .default({}),
  default: effect.default('deny'),
  grants: z.record(grantKey, effect).default({}),
});

const fileSchema = z.strictObject({ assistants: z.array(assistantSchema).max(200) });

/** Parses the file's text; throws `StewardError('config')` naming the first bad entry and field. */
export function parseAssistantsFile(text: string, path: string): AssistantDefinition[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new StewardError('config', `${path}: not valid JSON: ${(cause as Error).message}`, { cause });
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const entry = issue && issue.path[0] === 'assistants' && typeof issue.path[1] === 'number' ? issue.path[1] : null;
    const name =
      entry === null ? '' : ` (the Assistant ${JSON.stringify(nameAt(json, entry) ?? `number ${entry + 1}`)})`;
    throw new StewardError('config', `${path}: ${issue ? formatIssue(issue) : 'invalid'}${name}`);
  }
  const names = new Set<string>();
  return parsed.data.assistants.map((a) => {
    if (names.has(a.name)) throw new StewardError('config', `${path}: the Assistant "${a.name}" is defined twice`);
    names.add(a.name);
    return {
      name: a.name,
      purpose: a.purpose,
      instructions: a.instructions,
      models: a.models,
      defaultGrant: a.default,
      grants: Object.entries(a.grants).map(([target, e]) => ({
        scope: target.includes('.') ? ('tool' as const) : ('server' as const),
        target,
        effect: e,
      })),
    };
  });
}

function nameAt(json: unknown, index: number): string | undefined {
  const entry = (json as { assistants?: unknown[] } | null)?.assistants?.[index];
  const name = (entry as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name.slice(0, 40) : undefined;
}

/**
 * Reads the bootstrap file: `path` when configured (it must exist), else the default when it exists. Returns no
 * definitions when there is no file to read.
 */
export async function loadAssistantsFile(path: string | undefined): Promise<AssistantDefinition[]> {
  const target = path ?? DEFAULT_ASSISTANTS_FILE;
  let text: string;
  try {
    text = await readFile(target, 'utf8');
  } catch (cause) {
    if (path === undefined && (cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StewardError('config', `${target}: cannot read the Assistants file: ${(cause as Error).message}`, {
      cause,
    });
  }
  return parseAssistantsFile(text, target);
}

/**
 * Helpers that turn config problems into one sentence naming the JSON path, and expand `${VAR}`.
 */
import type { z } from 'zod';
import { StewardError } from '../engine/errors.ts';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Renders a JSON path as people write it: `mcpServers.fs.args[1]`, quoting keys that need it. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (IDENTIFIER.test(String(key))) out += out === '' ? String(key) : `.${String(key)}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(top level)' : out;
}

/** One zod issue as `path: problem`, without zod's generic "Invalid input" prefix. */
export function formatIssue(issue: z.core.$ZodIssue): string {
  const path = formatPath(issue.path);
  // zod leaves `input` out of issues unless asked, so a missing key shows only in the message.
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `${path}: required (expected ${issue.expected})`;
  }
  if (issue.code === 'invalid_key') {
    return `${path}: ${issue.issues[0]?.message ?? issue.message}`;
  }
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return `${path}: unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  return `${path}: ${issue.message.replace(/^Invalid (input|option): /, '')}`;
}

// `${NAME}`, `${env:NAME}` as VS Code and Cursor write it, and `${NAME:-default}` as Claude Code writes it.
const ENV_REF = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${VAR}` (or `${env:VAR}`, or `${VAR:-default}`) in each value from `env`; an unset variable is a config error naming it and its path. */
export function expandEnvRefs(
  values: Record<string, string>,
  path: readonly string[],
  source: string,
  env: NodeJS.ProcessEnv,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
      const found = env[name] ?? fallback;
      if (found === undefined) {
        throw new StewardError(
          'config',
          `${source}: ${formatPath([...path, key])}: environment variable ${name} is not set`,
        );
      }
      return found;
    });
  }
  return out;
}

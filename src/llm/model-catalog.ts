/**
 * The model catalog (`models.json`, or the file STEWARD_MODEL_CATALOG names): named models with their spec, what
 * they can do and their prices, and which model each role uses. Validated at start; a bad entry stops start-up with
 * one sentence naming it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { StewardError } from '../engine/errors.ts';
import type { ModelPrices } from '../engine/model-cost.ts';
import { missingCapabilities, ROLE_NEEDS, type Capability } from './model-capabilities.ts';

/** One model of the catalog. */
export interface CatalogModel {
  name: string;
  /** `openai:<model>`, `anthropic:<model>`, or a bare `<model>`, as STEWARD_MODEL_* take. */
  spec: string;
  capabilities: readonly Capability[];
  /** Undefined: the model's calls cost "unknown". */
  prices?: ModelPrices;
}

/** The validated catalog; `source` is the file it came from, for messages. */
export interface ModelCatalog {
  source: string;
  models: Readonly<Record<string, CatalogModel>>;
  /** Role → model name; every name is in `models`. */
  roles: Readonly<Record<string, string>>;
}

const price = z.number().finite().min(0, 'a price cannot be negative');
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const entrySchema = z.strictObject({
  spec: z.string().trim().min(1, 'set spec to a model such as openai:gpt-4.1-mini'),
  reasons: z.boolean().default(false),
  callsTools: z.boolean().default(false),
  seesImages: z.boolean().default(false),
  usdPerMillionTokens: z.strictObject({ input: price, output: price, cachedInput: price.optional() }).optional(),
});
const catalogSchema = z.strictObject({
  models: z.record(z.string(), entrySchema),
  roles: z.record(z.string(), z.string()).default({}),
});

/**
 * Reads the catalog: from `path` when given (it must exist), else from `models.json` when present, else none.
 * `roles` are the roles a catalog may assign.
 */
export function loadModelCatalog(path: string | undefined, roles: readonly string[]): ModelCatalog | undefined {
  const file = path ?? 'models.json';
  if (!path && !existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new StewardError('config', `Model catalog ${file} (STEWARD_MODEL_CATALOG) cannot be read: ${reason}.`);
  }
  return parseModelCatalog(text, file, roles);
}

/** Validates a catalog's text; throws a `config` error naming the file and the bad entry. */
export function parseModelCatalog(text: string, source: string, roles: readonly string[]): ModelCatalog {
  const fail = (what: string) => new StewardError('config', `Model catalog ${source}: ${what}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw fail(`not valid JSON (${(err as Error).message}).`);
  }
  const parsed = catalogSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'the file';
    throw fail(`${where}: ${issue?.message ?? 'invalid'}.`);
  }
  const models: Record<string, CatalogModel> = {};
  for (const [name, e] of Object.entries(parsed.data.models)) {
    if (!MODEL_NAME.test(name)) {
      throw fail(`models."${name}": a model name is letters, digits, ".", "_" or "-" (e.g. fast-mini).`);
    }
    const p = e.usdPerMillionTokens;
    models[name] = {
      name,
      spec: e.spec,
      capabilities: [
        ...(e.reasons ? ['reasons' as const] : []),
        ...(e.callsTools ? ['callsTools' as const] : []),
        ...(e.seesImages ? ['seesImages' as const] : []),
      ],
      // Cached input without its own price is billed as input: the cost is never understated.
      ...(p && {
        prices: {
          inputPerMillion: p.input,
          outputPerMillion: p.output,
          cachedInputPerMillion: p.cachedInput ?? p.input,
        },
      }),
    };
  }
  for (const [role, name] of Object.entries(parsed.data.roles)) {
    if (!roles.includes(role)) throw fail(`roles.${role}: there is no such role (roles: ${roles.join(', ')}).`);
    if (!Object.hasOwn(models, name)) {
      throw fail(`roles.${role}: names model "${name}", which is not in models (${Object.keys(models).join(', ')}).`);
    }
  }
  return { source, models, roles: parsed.data.roles };
}

/**
 * The model a role's setting means: a catalog name gives that model; a spec equal to a catalog model's spec is that
 * model (so it has its prices); any other spec is used as it is, with no name.
 */
export function resolveModel(value: string, catalog: ModelCatalog | undefined): { spec: string; name?: string } {
  const byName = catalog && Object.hasOwn(catalog.models, value) ? catalog.models[value] : undefined;
  if (byName) return { spec: byName.spec, name: byName.name };
  const bySpec = Object.values(catalog?.models ?? {}).find((m) => m.spec.trim() === value.trim());
  return bySpec ? { spec: bySpec.spec, name: bySpec.name } : { spec: value };
}

/**
 * Checks each role's model against what the role needs (refused: a `config` error) and prefers (a warning returned).
 * A model outside the catalog has unknown capabilities and is not checked.
 */
export function checkRoleModels(models: Readonly<Record<string, string>>, catalog: ModelCatalog): string[] {
  const warnings: string[] = [];
  for (const [role, value] of Object.entries(models)) {
    const { name } = resolveModel(value, catalog);
    const model = name === undefined ? undefined : catalog.models[name];
    if (!model) continue;
    const lacking = missingCapabilities(role, model.capabilities);
    if (lacking.length > 0) {
      throw new StewardError(
        'config',
        `Model catalog ${catalog.source}: the ${role} role needs a model with ${lacking.map((c) => `"${c}": true`).join(' and ')}, but it is given "${model.name}", which lacks it.`,
      );
    }
    const unmet = (ROLE_NEEDS[role]?.prefers ?? []).filter((c) => !model.capabilities.includes(c));
    if (unmet.length > 0) {
      warnings.push(
        `The ${role} works best with a model marked ${unmet.map((c) => `"${c}": true`).join(' and ')} in ${catalog.source}; "${model.name}" is not.`,
      );
    }
  }
  return warnings;
}

/**
 * One warning per catalog model whose spec names a provider that is not configured: no role uses it (a role's would
 * stop start-up), and a call naming it will be refused.
 */
export function unreachableModels(
  catalog: ModelCatalog,
  configured: Readonly<Record<'openai' | 'anthropic', boolean>>,
): string[] {
  const keys = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;
  return Object.values(catalog.models).flatMap((m) => {
    const provider = /^(openai|anthropic):/.exec(m.spec.trim())?.[1] as keyof typeof keys | undefined;
    if (!provider || configured[provider]) return [];
    return [
      `Model "${m.name}" of ${catalog.source} names ${provider}, but ${keys[provider]} is not set: a call naming it is refused.`,
    ];
  });
}

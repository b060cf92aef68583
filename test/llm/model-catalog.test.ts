import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { StewardError } from '../../src/engine/errors.ts';
import { pricesFor } from '../../src/engine/model-cost.ts';
import { missingCapabilities } from '../../src/llm/model-capabilities.ts';
import { checkRoleModels, parseModelCatalog } from '../../src/llm/model-catalog.ts';

const ROLES = ['planner', 'classifier', 'synthesizer', 'llm_step'];
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Writes `catalog` (an object, or raw text) to a fresh folder and returns its path. */
function catalogFile(catalog: unknown, name = 'models.json'): string {
  const dir = mkdtempSync(join(tmpdir(), 'steward-models-'));
  dirs.push(dir);
  const path = join(dir, name);
  writeFileSync(path, typeof catalog === 'string' ? catalog : JSON.stringify(catalog));
  return path;
}

const catalog = {
  models: {
    fast: {
      spec: 'openai:gpt-4.1-mini',
      callsTools: true,
      usdPerMillionTokens: { input: 0.4, output: 1.6, cachedInput: 0.1 },
    },
    thinker: { spec: 'anthropic:claude-sonnet-4-5', reasons: true, usdPerMillionTokens: { input: 3, output: 15 } },
    local: { spec: 'llama3.1' },
  },
  roles: { planner: 'thinker', classifier: 'fast' },
};
const keys = { OPENAI_API_KEY: 'sk-openai-key', ANTHROPIC_API_KEY: 'sk-anthropic-key' };

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StewardError);
    expect((err as StewardError).code).toBe('config');
    return (err as Error).message;
  }
  throw new Error('expected a config error');
}

describe('the model catalog in configuration', () => {
  it('gives roles their catalog models and the prices of every priced model; the rest keep their defaults', () => {
    const c = loadConfig({ ...keys, STEWARD_MODEL_CATALOG: catalogFile(catalog) });
    expect(c.llm.models).toEqual({
      planner: 'thinker',
      classifier: 'fast',
      synthesizer: 'gpt-4.1',
      llm_step: 'gpt-4.1-mini',
      butler: 'fast',
    });
    expect(c.settings.modelPrices).toEqual([
      {
        name: 'fast',
        model: 'gpt-4.1-mini',
        prices: { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1 },
      },
      // Cached input without its own price is billed as input, so a cost is never understated.
      {
        name: 'thinker',
        model: 'claude-sonnet-4-5',
        prices: { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 3 },
      },
    ]);
    expect(c.warnings).toEqual([]);
  });

  it("lets a role's variable win over the catalog's roles, which win over STEWARD_MODEL; a catalog name in env gets its prices", () => {
    const c = loadConfig({
      ...keys,
      STEWARD_MODEL_CATALOG: catalogFile(catalog),
      STEWARD_MODEL: 'openai:gpt-everything',
      STEWARD_MODEL_CLASSIFIER: 'openai:gpt-4.1-nano',
      STEWARD_MODEL_SYNTHESIZER: 'fast',
    });
    expect(c.llm.models).toEqual({
      planner: 'thinker',
      classifier: 'openai:gpt-4.1-nano',
      synthesizer: 'fast',
      llm_step: 'openai:gpt-everything',
      // Quick answers follow the classifier unless named.
      butler: 'openai:gpt-4.1-nano',
    });
    // The synthesizer's answers name gpt-4.1-mini, and are priced as the catalog's "fast".
    expect(pricesFor(c.settings.modelPrices, { model: 'gpt-4.1-mini-2025-04-14' })?.outputPerMillion).toBe(1.6);
    expect(pricesFor(c.settings.modelPrices, { model: 'gpt-4.1-nano' })).toBeUndefined();
  });

  it('works as before without a catalog: no prices, so every cost is unknown', () => {
    const c = loadConfig({ OPENAI_API_KEY: 'k' });
    expect(c.llm.catalog).toBeUndefined();
    expect(c.settings.modelPrices).toEqual([]);
    expect(c.llm.models.planner).toBe('gpt-4.1');
  });

  it('reads models.json from the working folder when present, and only then', () => {
    const dir = join(catalogFile(catalog), '..');
    const before = process.cwd();
    try {
      process.chdir(dir);
      expect(loadConfig(keys).llm.models.planner).toBe('thinker');
      rmSync(join(dir, 'models.json'));
      expect(loadConfig(keys).llm.models.planner).toBe('gpt-4.1');
    } finally {
      process.chdir(before);
    }
  });

  it('stops start-up with one sentence naming the file and the bad entry', () => {
    const bad = (c: unknown) => configError(() => loadConfig({ ...keys, STEWARD_MODEL_CATALOG: catalogFile(c) }));
    const negative = { models: { fast: { spec: 'x', usdPerMillionTokens: { input: -1, output: 1 } } } };
    expect(bad(negative)).toMatch(
      /^Model catalog .*models\.json: models\.fast\.usdPerMillionTokens\.input: a price cannot be negative\.$/,
    );
    expect(bad({ models: { fast: { spec: 'x', callTools: true } } })).toMatch(/models\.fast: .*callTools/);
    expect(bad({ models: { fast: {} } })).toMatch(/models\.fast\.spec: /);
    expect(bad({ models: { fast: { spec: 'x', usdPerMillionTokens: { input: 1 } } } })).toMatch(
      /models\.fast\.usdPerMillionTokens\.output: /,
    );
    expect(bad({ models: { 'no spaces': { spec: 'x' } } })).toMatch(/a model name is letters, digits/);
    expect(bad({ models: { fast: { spec: 'x' } }, roles: { planer: 'fast' } })).toBe(
      `Model catalog ${dirs.at(-1)!}/models.json: roles.planer: there is no such role (roles: planner, classifier, synthesizer, llm_step, butler).`,
    );
    expect(bad({ models: { fast: { spec: 'x' } }, roles: { planner: 'slow' } })).toMatch(
      /roles\.planner: names model "slow", which is not in models \(fast\)\.$/,
    );
    expect(bad('{ "models": ')).toMatch(/: not valid JSON \(/);
    expect(configError(() => loadConfig({ ...keys, STEWARD_MODEL_CATALOG: '/nowhere/models.json' }))).toBe(
      'Model catalog /nowhere/models.json (STEWARD_MODEL_CATALOG) cannot be read: no such file.',
    );
  });

  it('refuses a role given a model without what it needs, and warns of one without what it prefers', () => {
    const parsed = parseModelCatalog(JSON.stringify(catalog), 'models.json', [...ROLES, 'butler']);
    // The Butler answers by calling tools: a model not marked callsTools is refused, whoever names it.
    expect(configError(() => checkRoleModels({ butler: 'thinker' }, parsed))).toBe(
      'Model catalog models.json: the butler role needs a model with "callsTools": true, but it is given "thinker", which lacks it.',
    );
    expect(configError(() => checkRoleModels({ butler: 'anthropic:claude-sonnet-4-5' }, parsed))).toMatch(/"thinker"/);
    expect(checkRoleModels({ butler: 'fast' }, parsed)).toEqual([]);
    // A model outside the catalog has unknown capabilities: it is not refused.
    expect(checkRoleModels({ butler: 'openai:gpt-unknown' }, parsed)).toEqual([]);
    expect(missingCapabilities('classifier', [])).toEqual([]);

    const c = loadConfig({ ...keys, STEWARD_MODEL_CATALOG: catalogFile(catalog), STEWARD_MODEL_PLANNER: 'fast' });
    expect(c.warnings).toEqual([
      `The planner works best with a model marked "reasons": true in ${dirs.at(-1)!}/models.json; "fast" is not.`,
    ]);
  });

  it('warns at start of a catalog model whose provider has no key, when no role uses it', () => {
    const path = catalogFile(catalog);
    const c = loadConfig({ OPENAI_API_KEY: 'k', STEWARD_MODEL_CATALOG: path, STEWARD_MODEL_PLANNER: 'fast' });
    expect(c.warnings).toContain(
      `Model "thinker" of ${path} names anthropic, but ANTHROPIC_API_KEY is not set: a call naming it is refused.`,
    );
    expect(loadConfig({ ...keys, STEWARD_MODEL_CATALOG: path }).warnings).toEqual([]);
  });

  it('parses the example catalog docs/configuration.md shows, every price in it and every role mapped', () => {
    const text = readFileSync(new URL('../../models.json.example', import.meta.url), 'utf8');
    const example = parseModelCatalog(text, 'models.json.example', ROLES);
    expect(Object.keys(example.roles).sort()).toEqual([...ROLES].sort());
    expect(Object.values(example.models).every((m) => m.prices !== undefined)).toBe(true);
    expect(checkRoleModels(example.roles, example)).toEqual([]);
  });
});

describe('the butler and the catalog', () => {
  const small = { ...catalog, roles: { planner: 'thinker', classifier: 'thinker' } };

  it('a butler that only inherits a classifier model that cannot call tools turns quick answers off with a warning', () => {
    const c = loadConfig({ ...keys, STEWARD_MODEL_CATALOG: catalogFile(small) });
    expect(c.settings.quickAnswers).toBeUndefined();
    expect(c.warnings.join('\n')).toMatch(/Quick answers are off: they take the classifier's model "thinker"/);
  });

  it('with quick answers off, the butler is not checked at all', () => {
    const c = loadConfig({ ...keys, STEWARD_MODEL_CATALOG: catalogFile(small), STEWARD_QUICK_ANSWERS: 'off' });
    expect(c.settings.quickAnswers).toBeUndefined();
    expect(c.warnings.join('\n')).not.toMatch(/Quick answers/);
  });

  it('a butler named on purpose with a model that cannot call tools stops start-up', () => {
    const env = { ...keys, STEWARD_MODEL_CATALOG: catalogFile(small), STEWARD_MODEL_BUTLER: 'thinker' };
    expect(configError(() => loadConfig(env))).toMatch(/the butler role needs a model with "callsTools": true/);
  });

  it('a classifier model that can call tools serves quick answers too', () => {
    const c = loadConfig({ ...keys, STEWARD_MODEL_CATALOG: catalogFile(catalog) });
    expect(c.settings.quickAnswers).toBeDefined();
    expect(c.llm.models.butler).toBe('fast');
  });
});

/**
 * The example files the README and docs/ tell people to copy, against every model setup they show (OpenAI,
 * Anthropic, a local OpenAI-compatible server), and .gitignore against the files they tell people to create.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAssistantsFile } from '../src/assistants-file.ts';
import { loadConfig } from '../src/config.ts';
import { createLlmClient } from '../src/llm/model-router.ts';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const DOCS = ['README.md', 'docs/configuration.md', 'docs/mcp-servers.md', 'docs/assistants-and-delegation.md'];

const SETUPS = {
  openai: { OPENAI_API_KEY: 'sk-test' },
  anthropic: { ANTHROPIC_API_KEY: 'sk-ant-test' },
  local: { OPENAI_BASE_URL: 'http://localhost:11434/v1', STEWARD_MODEL: 'llama3.1' },
};

describe('.gitignore', () => {
  it('ignores every file and folder the README and docs tell people to create', () => {
    const created = DOCS.flatMap((doc) =>
      [...read(doc).matchAll(/\bcp \S+\.example (\S+?)`|\bmkdir -p (\S+?)[`\s]/g)].map((m) => m[1] ?? m[2] ?? ''),
    );
    expect(new Set(created)).toEqual(new Set(['.env', 'mcp.json', 'models.json', 'assistants.json', 'workspace']));
    const ignored = read('.gitignore')
      .split('\n')
      .map((l) => l.trim().replace(/^\//, '').replace(/\/$/, ''));
    expect(created.filter((f) => !ignored.includes(f))).toEqual([]);
  });
});

describe('assistants.json.example', () => {
  it("names no model, so its Assistant plans with the roles' models in every setup (no catalog needed)", () => {
    const [ops, ...rest] = parseAssistantsFile(read('assistants.json.example'), 'assistants.json.example');
    expect(rest).toEqual([]);
    expect(ops?.models).toEqual({});
  });
});

describe('the model catalog examples', () => {
  it('models.local.json.example gives every role the local model, with no key and no STEWARD_MODEL, at no cost', () => {
    const c = loadConfig({
      OPENAI_BASE_URL: SETUPS.local.OPENAI_BASE_URL,
      STEWARD_MODEL_CATALOG: 'models.local.json.example',
    });
    expect(Object.values(c.llm.models)).toEqual(['local', 'local', 'local', 'local', 'local']);
    expect(c.settings.quickAnswers).toBeDefined();
    expect(c.settings.modelPrices).toEqual([
      {
        name: 'local',
        model: 'llama3.1',
        prices: { inputPerMillion: 0, outputPerMillion: 0, cachedInputPerMillion: 0 },
      },
    ]);
    expect(c.warnings).toEqual([
      'The planner works best with a model marked "reasons": true in models.local.json.example; "local" is not.',
    ]);
    expect(() => createLlmClient(c.llm)).not.toThrow();
  });

  it('models.json.example serves the OpenAI setup, and says at start that its Anthropic models need their key', () => {
    const c = loadConfig({ ...SETUPS.openai, STEWARD_MODEL_CATALOG: 'models.json.example' });
    expect(c.llm.models.planner).toBe('o4-mini');
    expect(c.warnings.join('\n')).toMatch(/"sonnet" of models\.json\.example names anthropic, but ANTHROPIC_API_KEY/);
    expect(() => createLlmClient(c.llm)).not.toThrow();
  });

  it('models.json.example with only an Anthropic key stops start-up, naming the model and the missing key', () => {
    const c = loadConfig({ ...SETUPS.anthropic, STEWARD_MODEL_CATALOG: 'models.json.example' });
    expect(() => createLlmClient(c.llm)).toThrow(
      /Model "o4-mini" of models\.json\.example names openai \("openai:o4-mini"\), but OPENAI_API_KEY is not set/,
    );
  });
});

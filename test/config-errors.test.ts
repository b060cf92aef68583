/**
 * Config errors in Steward's words (issue 33): each bad setting is one sentence naming the variable, what is wrong
 * with its value and a value that works, through the real loader; never the validator's "expected number, received
 * NaN". Model errors name the variable the person actually set.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../src/config.ts';
import { createLlmClient } from '../src/llm/model-router.ts';

const KEY = { OPENAI_API_KEY: 'sk-test' };

/** The message loadConfig throws for `env`, or undefined when it loads. */
function errorOf(env: NodeJS.ProcessEnv): string | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('a bad setting', () => {
  it.each([
    [
      'STEWARD_MAX_PARALLEL',
      'lots',
      'Configuration error: STEWARD_MAX_PARALLEL is "lots", which is not a number: it must be a whole number of 1 or more, e.g. STEWARD_MAX_PARALLEL=16.',
    ],
    [
      'DATA_DIR',
      '',
      'Configuration error: DATA_DIR is set but empty: it must be the folder for the embedded database and the log, e.g. DATA_DIR=./data (or leave DATA_DIR out to use its default).',
    ],
    [
      'PORT',
      '70000',
      'Configuration error: PORT is "70000", which is more than 65535: it must be a port number from 0 to 65535 (0 picks a free port), e.g. PORT=3000.',
    ],
    [
      'SLACK_PLAN_BLOCKS',
      'yes',
      'Configuration error: SLACK_PLAN_BLOCKS is "yes", which is not one of the words it takes: it must be on or off, e.g. SLACK_PLAN_BLOCKS=on.',
    ],
    [
      'STEWARD_DELEGATION_DEPTH',
      '1.5',
      'Configuration error: STEWARD_DELEGATION_DEPTH is "1.5", which is not a whole number: it must be a whole number of 1 or more, e.g. STEWARD_DELEGATION_DEPTH=2.',
    ],
    [
      'STEWARD_LEASE_SECONDS',
      '0.5',
      'Configuration error: STEWARD_LEASE_SECONDS is "0.5", but it must be at least 1 (a shorter lease lapses between renewals), e.g. STEWARD_LEASE_SECONDS=15.',
    ],
  ])('%s=%j is one sentence: the variable, the problem, a good value', (name, value, sentence) => {
    expect(errorOf({ ...KEY, [name]: value })).toBe(sentence);
  });

  it('never shows the value of a secret setting, such as a database URL with its password', () => {
    const message = errorOf({ ...KEY, DATABASE_URL: 'mysql://steward:pw-canary@db/steward' });
    expect(message).toBe(
      'Configuration error: DATABASE_URL is set to a value (not shown here), but it must start with postgres:// or postgresql://, e.g. DATABASE_URL=postgres://steward:password@localhost:5432/steward.',
    );
  });

  it('for every variable and any junk value: a sentence in Steward words whose example value is accepted', () => {
    const junk = ['lots', '-1', '0', '1.5', '', ' ', '99999999', 'a b', 'http//x'];
    let refused = 0;
    for (const name of CONFIG_VARIABLES) {
      for (const value of junk) {
        const message = errorOf({ ...KEY, [name]: value });
        if (!message || !new RegExp(`^Configuration error: ${name} is ("|set but empty|set to a value)`).test(message))
          continue;
        refused++;
        expect(message, `${name}=${value}`).not.toMatch(/expected|received|Too small|Too big|Invalid|>=|<=/);
        expect(message, `${name}=${value}`).toMatch(/e\.g\.|such as/);
        const example = new RegExp(`e\\.g\\. ${name}=(\\S+?)[.)]?(?: \\(|$)`).exec(message)?.[1];
        if (example !== undefined) {
          expect(errorOf({ ...KEY, [name]: example }) ?? '', `${name}=${example}`).not.toMatch(
            new RegExp(`^Configuration error: ${name} is ("|set but empty|set to a value)`),
          );
        }
      }
    }
    expect(refused).toBeGreaterThan(100);
  });
});

describe('the model settings', () => {
  it('with no model at all, says what to set and that it goes in .env', () => {
    expect(errorOf({})).toMatch(
      /^No language model is configured\. Set OPENAI_API_KEY .* in \.env \(start from it with `cp \.env\.example \.env`\)/,
    );
  });

  it('a local server without a model name says to set STEWARD_MODEL in .env', () => {
    expect(errorOf({ OPENAI_BASE_URL: 'http://localhost:11434/v1' })).toMatch(
      /set STEWARD_MODEL in \.env to one of its models/,
    );
  });

  it('an Anthropic model without its key names STEWARD_MODEL when that is what was set, not STEWARD_MODEL_PLANNER', () => {
    const c = loadConfig({ ...KEY, STEWARD_MODEL: 'anthropic:claude-sonnet-4-5' });
    expect(() => createLlmClient(c.llm)).toThrow(
      'STEWARD_MODEL names anthropic ("anthropic:claude-sonnet-4-5"), but ANTHROPIC_API_KEY is not set: set it in .env, or name a model of a provider that is set up.',
    );
    const own = loadConfig({ ...KEY, STEWARD_MODEL_SYNTHESIZER: 'anthropic:claude-sonnet-4-5' });
    expect(() => createLlmClient(own.llm)).toThrow(/^STEWARD_MODEL_SYNTHESIZER names anthropic/);
  });

  it('records where each role model came from: its variable, STEWARD_MODEL, the catalog, or the default', () => {
    expect(loadConfig({ ...KEY, STEWARD_MODEL: 'm', STEWARD_MODEL_PLANNER: 'p' }).llm.modelSources).toEqual({
      planner: 'STEWARD_MODEL_PLANNER',
      classifier: 'STEWARD_MODEL',
      synthesizer: 'STEWARD_MODEL',
      llm_step: 'STEWARD_MODEL',
      butler: 'STEWARD_MODEL',
    });
    expect(loadConfig({ ANTHROPIC_API_KEY: 'k', STEWARD_MODEL_BUTLER: 'b' }).llm.modelSources).toMatchObject({
      planner: 'the Anthropic default',
      butler: 'STEWARD_MODEL_BUTLER',
    });
    const local = { OPENAI_BASE_URL: 'http://localhost:11434/v1', STEWARD_MODEL_CATALOG: 'models.local.json.example' };
    expect(loadConfig(local).llm.modelSources.planner).toBe('roles.planner of models.local.json.example');
  });
});

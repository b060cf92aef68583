import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { NO_SPEND_CAPS } from '../src/engine/spend.ts';

const base = { OPENAI_API_KEY: 'k' };

describe('spend settings', () => {
  it('sets no cap by default, and a default price of $15 per million tokens', () => {
    const { spend } = loadConfig(base).settings;
    expect(spend.caps).toEqual(NO_SPEND_CAPS);
    expect(spend.defaultPricePerMillion).toBe(15);
  });

  it('reads each cap in US dollars as micro-dollars; empty and off mean no cap', () => {
    const { caps } = loadConfig({
      ...base,
      STEWARD_SPEND_CHANNEL_DAY: '5',
      STEWARD_SPEND_CHANNEL_MONTH: '12.50',
      STEWARD_SPEND_WORKSPACE_DAY: ' 0.25 ',
      STEWARD_SPEND_WORKSPACE_MONTH: '0',
      STEWARD_SPEND_PERSON_DAY: 'off',
      STEWARD_SPEND_PERSON_MONTH: '',
    }).settings.spend;
    expect(caps).toEqual({
      channel: { day: 5_000_000, month: 12_500_000 },
      workspace: { day: 250_000, month: 0 },
      person: { day: null, month: null },
    });
  });

  it.each([
    [
      'STEWARD_SPEND_CHANNEL_DAY',
      '$5',
      /STEWARD_SPEND_CHANNEL_DAY is "[^"]*", but it must be an amount in US dollars such as 5/,
    ],
    ['STEWARD_SPEND_WORKSPACE_MONTH', '-1', /STEWARD_SPEND_WORKSPACE_MONTH is "[^"]*", but it must be an amount/],
    ['STEWARD_SPEND_PERSON_DAY', '1,000', /STEWARD_SPEND_PERSON_DAY is "[^"]*", but it must be an amount/],
    [
      'STEWARD_SPEND_PERSON_MONTH',
      'unlimited',
      /STEWARD_SPEND_PERSON_MONTH is "[^"]*", but it must be an amount .*or off/,
    ],
    [
      'STEWARD_SPEND_CHANNEL_MONTH',
      '2000000000',
      /STEWARD_SPEND_CHANNEL_MONTH is "[^"]*", but it must be at most 1000000000/,
    ],
    [
      'STEWARD_SPEND_DEFAULT_PRICE',
      '0',
      /STEWARD_SPEND_DEFAULT_PRICE is "[^"]*", but it must be more than 0: .*never counted as free/,
    ],
    [
      'STEWARD_SPEND_DEFAULT_PRICE',
      'cheap',
      /STEWARD_SPEND_DEFAULT_PRICE is "[^"]*", but it must be a price in US dollars per million/,
    ],
  ])('refuses %s=%s by name', (name, value, message) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(message);
  });

  it("prices each role's calls by its model: the provider's id and, from the catalog, its name", () => {
    const catalog = join(tmpdir(), `models-${process.pid}-${Date.now()}.json`);
    writeFileSync(
      catalog,
      JSON.stringify({
        models: { mini: { spec: 'openai:gpt-4.1-mini', usdPerMillionTokens: { input: 0.4, output: 1.6 } } },
        roles: { classifier: 'mini' },
      }),
    );
    const c = (() => {
      try {
        return loadConfig({ ...base, STEWARD_MODEL_CATALOG: catalog, STEWARD_MODEL_PLANNER: 'openai:o4-mini' });
      } finally {
        rmSync(catalog, { force: true });
      }
    })();
    expect(c.settings.spend.roleModels).toMatchObject({
      planner: { model: 'o4-mini' },
      classifier: { model: 'gpt-4.1-mini', modelName: 'mini' },
      butler: { model: 'gpt-4.1-mini', modelName: 'mini' },
    });
    expect(c.settings.spend.roleModels?.planner).not.toHaveProperty('modelName');
  });
});

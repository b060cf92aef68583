/**
 * `/steward spend` on Discord (the real discord.js client and the fake Discord): a mention's run talks in a thread of
 * its own, and counts for the channel the thread was started in, so the channel's spend is what its threads spent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PricedModel } from '../../src/engine/model-cost.ts';
import { NO_SPEND_CAPS } from '../../src/engine/spend.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const prices: PricedModel[] = [
  {
    name: 'planner',
    model: 'planner-model',
    prices: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0 },
  },
  {
    name: 'synth',
    model: 'synth-model',
    prices: { inputPerMillion: 1, outputPerMillion: 4, cachedInputPerMillion: 0 },
  },
];

describe('/steward spend on Discord, end to end on postgres', () => {
  it("counts a thread's run for the channel it was started in, and shows it against the channel's cap", async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: {
          text: planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }]),
          usage: { input: 1_000, output: 200 },
        },
        synthesizer: { text: 'Said hi.', usage: { input: 500, output: 50 } },
      }),
      settings: {
        modelPrices: prices,
        spend: { caps: { ...NO_SPEND_CAPS, channel: { day: 2_000_000, month: null } }, defaultPricePerMillion: 15 },
      },
    });
    const harness = h;
    await harness.mention('say hi');
    const run = await onlyRun(harness);
    const channel = `${harness.discord.guildId}:${harness.discord.channelId}`;
    const row = await harness.db.db
      .selectFrom('runs')
      .select(['place', 'conversation_key'])
      .where('id', '=', run.id)
      .executeTakeFirst();
    // The run talks in its thread; it counts for the channel the thread was started in.
    expect(row?.place).toBe(channel);
    expect(row?.conversation_key).not.toBe(channel);
    await harness.waitFor('the report written', async () => (await harness.store.llmUsageForRun(run.id)).calls === 2);

    const id = await harness.slash('spend');
    const answer = await harness.waitFor('the private answer', () => harness.privateTexts(id).find(Boolean));
    expect(answer).toContain('This channel: $0.0043 today, $0.0043 this month · cap $2.00 a day ($1.9957 left)');
    expect(answer).toContain(`#${harness.discord.channelId}: $0.0043 today`);
    expect(harness.llm.failures).toEqual([]);
  });
});

/**
 * `/steward spend` through the real Bolt app and the fake Slack (issue 30): answered privately, with the channel's,
 * the asker's and the workspace's spend against the caps, and spend by channel, person and model (every channel and
 * person only for an approver). A run started by a mention in a channel counts for that channel, thread and all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PricedModel } from '../../src/engine/model-cost.ts';
import { NO_SPEND_CAPS } from '../../src/engine/spend.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';
import { slashCommandBody } from './slack-requests.ts';

let h: SlackHarness | undefined;
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

/** Runs `/steward <text>` and returns what was posted to its response_url (the private answer). */
async function command(harness: SlackHarness, text: string, o: { user?: string; channel?: string } = {}) {
  const before = harness.slack.calls.length;
  const body = slashCommandBody({
    text,
    ...o,
    responseUrl: harness.slack.responseUrl(),
    triggerId: harness.slack.newTriggerId(),
  });
  const res = await harness.post(body, 'application/x-www-form-urlencoded');
  expect(res.status).toBe(200);
  await harness.channel.settled();
  const answers = harness.slack.calls.slice(before).filter((c) => c.method === 'response_url');
  expect(answers.map((a) => a.args.response_type)).toEqual(['ephemeral']);
  return String(answers[0]!.args.text);
}

describe('/steward spend on Slack, end to end on postgres', () => {
  it("shows a channel's spend against its cap, and every channel, person and model to an approver", async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        // 1,000 × $2 + 200 × $8 per million = $0.0036; the report: 500 × $1 + 50 × $4 = $0.0007.
        planner: {
          text: planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }]),
          usage: { input: 1_000, output: 200 },
        },
        synthesizer: { text: 'Said hi.', usage: { input: 500, output: 50 } },
      }),
      settings: {
        modelPrices: prices,
        spend: {
          caps: {
            ...NO_SPEND_CAPS,
            channel: { day: 1_000_000, month: null },
            workspace: { day: null, month: 50_000_000 },
          },
          defaultPricePerMillion: 15,
        },
      },
    });
    const harness = h;
    await harness.mention('say hi');
    const runId = await onlyRunId(harness);
    // Its report's call settled (its usage row is written in the same statement as the totals move).
    await harness.waitFor('the report written', async () => (await harness.store.llmUsageForRun(runId)).calls === 2);
    await harness.channel.settled();

    // Ada, who is not an approver, sees her channel and herself.
    const ada = await command(harness, 'spend');
    expect(ada).toContain('This channel: $0.0043 today, $0.0043 this month · cap $1.00 a day ($0.9957 left)');
    expect(ada).toContain('Workspace: $0.0043 today, $0.0043 this month · cap $50.00 a month ($49.9957 left)');
    expect(ada).toContain('You: $0.0043 today, $0.0043 this month · no cap');
    expect(ada).toContain('• #C0GENERAL: $0.0043 today, $0.0043 this month');
    expect(ada).toContain('(An approver sees every channel and person.)');

    // Asked in another channel, that channel has spent nothing.
    const elsewhere = await command(harness, 'spend', { channel: 'C0OTHER' });
    expect(elsewhere).toContain('This channel: $0.00 today, $0.00 this month · cap $1.00 a day ($1.00 left)');
    expect(elsewhere).not.toContain('#C0GENERAL');

    // An approver sees every channel, person and model.
    const boss = await command(harness, 'spend', { user: 'U0BOSS' });
    expect(boss).toContain('By channel:\n• #C0GENERAL: $0.0043 today, $0.0043 this month');
    expect(boss).toContain('By person:\n• U0ADA: $0.0043 today, $0.0043 this month');
    expect(boss).toContain(
      'By model:\n• planner-model: $0.0036 today, $0.0036 this month\n• synth-model: $0.0007 today',
    );
    expect(boss).not.toContain('An approver sees');
    expect(harness.llm.failures).toEqual([]);
  });

  it('is listed in the help', async () => {
    h = await startSlackHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    const res = await h.post(
      slashCommandBody({ text: 'help', responseUrl: h.slack.responseUrl(), triggerId: h.slack.newTriggerId() }),
      'application/x-www-form-urlencoded',
    );
    expect(await res.text()).toContain('/steward spend');
  });
});

/**
 * Issue 32: Slack refuses a post into a channel Steward is not a member of (`not_in_channel`, the fake's membership
 * rule). A workflow whose channel Steward was removed from fires: its run is recorded as failed with the reason, the
 * log says what to do, and the owner is told by DM, since the channel's thread is closed to Steward too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE_LIMITS } from '../../src/engine/workflow/schedule-limits.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, privateCommand, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

/**
 * A run in #general saved as workflow "digest" (`save`: the command, with its options), then Steward removed from
 * #general and the workflow scheduled every second: what the first fire left, with the DM its owner got.
 */
async function fireWhereStewardLeft(save: string) {
  h = await startSlackHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({ planner: [echo], synthesizer: 'Said hi.' }),
    settings: { scheduleLimits: { ...DEFAULT_SCHEDULE_LIMITS, seconds: true, minIntervalMs: 0 } },
  });
  const harness = h;
  await harness.steward.recover();
  const thread = await harness.mention('say hi');
  await harness.waitFor('the report', () => harness.replies(thread).find((m) => messageText(m).includes('Said hi.')));
  await harness.steward.idle();
  expect((await privateCommand(harness, save, 'U0ADA'))[0]).toMatch(/^Saved workflow "digest"/);

  // Someone removes Steward from #general; the workflow's next fire is due there.
  harness.slack.leave('C0GENERAL');
  const firstRun = (await harness.db.db.selectFrom('runs').select('id').execute()).map((r) => r.id);
  await privateCommand(harness, 'schedule digest "* * * * * *" UTC', 'U0ADA');
  const dm = await harness.waitFor('a DM to the owner', () =>
    [...harness.slack.messages.values()].find((m) => m.channel === 'U0ADA'),
  );
  await privateCommand(harness, 'schedule digest pause', 'U0ADA');
  await harness.steward.idle();
  return { harness, thread, firstRun, dm };
}

describe('a post Slack refuses because Steward is not in the channel', () => {
  it('a workflow fire into a channel Steward left: the run records why, the log says so, the owner hears it by DM', async () => {
    const { harness, thread, firstRun, dm } = await fireWhereStewardLeft('save digest');

    // The owner reads where and why, and what to do about it.
    const said = messageText(dm);
    expect(said).toContain('About <#C0GENERAL>: I cannot post there, since I am not a member of it');
    expect(said).toContain('/invite @Steward');
    expect(said).toMatch(
      /I could not show the plan here \(Steward is not a member of channel C0GENERAL \(Slack: not_in_channel\)/,
    );
    expect(said).toContain('nothing was run');

    // The fire's run is kept, failed, with the reason in its history; nothing else reached the channel.
    const fired = await harness.db.db
      .selectFrom('runs')
      .select(['id', 'status'])
      .where('id', 'not in', firstRun)
      .execute();
    expect(fired.length).toBeGreaterThanOrEqual(1);
    for (const run of fired) {
      expect(run.status).toBe('failed');
      const events = await harness.store.listEvents(run.id);
      const refused = events.find((e) => e.type === 'cardNotDelivered');
      expect(JSON.stringify(refused?.payload)).toContain('not a member of channel C0GENERAL (Slack: not_in_channel)');
    }
    const refusals = harness.slack.calls.filter((c) => c.response.error === 'not_in_channel');
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.every((c) => c.args.channel === 'C0GENERAL')).toBe(true);
    expect(
      harness.logs.some((l) => /^error .*Steward is not a member of channel C0GENERAL.*\/invite @Steward/.test(l)),
    ).toBe(true);
    expect(harness.replies(thread).filter((m) => messageText(m).includes('Said hi.'))).toHaveLength(1);
  });

  it('a fire that waits for approval, in a channel Steward left: the run records why and the owner hears it by DM', async () => {
    const { harness, firstRun, dm } = await fireWhereStewardLeft('save digest every-fire');

    expect(messageText(dm)).toContain('About <#C0GENERAL>: I cannot post there');
    const fired = await harness.db.db
      .selectFrom('runs')
      .select(['id', 'status'])
      .where('id', 'not in', firstRun)
      .execute();
    expect(fired.length).toBeGreaterThanOrEqual(1);
    for (const run of fired) {
      expect(run.status).toBe('failed');
      const refused = (await harness.store.listEvents(run.id)).find((e) => e.type === 'cardNotDelivered');
      expect(JSON.stringify(refused?.payload)).toContain('not a member of channel C0GENERAL (Slack: not_in_channel)');
    }
  });
});

/**
 * Raising the delegation depth on a Slack card (issue 30), through the real Bolt app and the fake Slack: a plan whose
 * delegate step asks for more depth than the setting shows why on its card and a Raise depth button. The requester's
 * press is refused with the reason in the thread; the approver's is recorded (who and when) and said in the thread,
 * and the run it starts hands out its child with the raised limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { allTexts } from '../bot/slack/fixtures.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { delegate } from './delegation-fixtures.ts';
import { createAuditServer, planReply, type AuditServer } from './harness.ts';
import { privateCommand, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const OPS_PLANS = 'You plan as the Assistant "ops"';

describe('Raise depth on a Slack card, end to end on postgres', () => {
  it("refuses the requester's press with the reason, records the approver's, and the child gets the raised limit", async () => {
    audit = createAuditServer();
    h = await startSlackHarness({
      db: 'postgres',
      servers: [audit.config()],
      settings: { delegation: { depth: 1, concurrency: 10, rounds: 3, messages: 5 } },
      script: byRole({
        planner: (req) =>
          req.system.includes(OPS_PLANS)
            ? planReply([{ id: 'find', tool: 'audit.lookup', args: { answer: 'deep' } }])
            : planReply([delegate('ask', 'Go deeper.', { args: { assistant: 'ops', task: 'Go deeper.', depth: 3 } })]),
        synthesizer: 'Done.',
      }),
    });
    const harness = h;
    for (const command of ['create ops "Operations"', 'ops grant audit allow'])
      expect(await privateCommand(harness, `assistant ${command}`, 'U0BOSS')).toEqual([
        expect.stringMatching(/^(Created the Assistant|"ops": allow)/),
      ]);
    await privateCommand(harness, 'review all', 'U0ADA');

    const thread = await harness.mention('Go deep with ops.');
    const card = await harness.waitFor('the card offering Raise depth', () => {
      const c = [...harness.slack.messages.values()].find(
        (m) => m.threadTs === thread && m.blocks[0]?.type === 'header',
      );
      return c && JSON.stringify(c.blocks).includes('"action_id":"steward.raise"') ? c : undefined;
    });
    expect(allTexts(card.blocks).join('\n')).toContain(
      "A step asks to hand work on 3 levels deep; the operator's setting is 1, so it gets 1 unless an approver raises the brake with Raise depth (never more than 5).",
    );
    const texts = () =>
      harness
        .replies(thread)
        .flatMap((m) => [m.text ?? '', ...allTexts(m.blocks)])
        .join('\n');

    await harness.press(card, 'raise', { user: 'U0ADA' });
    await waitUntil('the refusal in the thread', () =>
      /Only an approver can raise a brake: a plan.s step may ask for less than the operator.s settings, never more\. This run.s delegation depth stays 1\./.test(
        texts(),
      ),
    );
    expect(await harness.db.db.selectFrom('brake_raises').selectAll().execute()).toEqual([]);

    await harness.press(card, 'raise', { user: 'U0BOSS' });
    await waitUntil('the raise in the thread', () =>
      /raised this run.s delegation depth to 3 \(the operator.s setting is 1; never more than 5\)\. Recorded\./.test(
        texts(),
      ),
    );
    const [row] = await harness.db.db.selectFrom('brake_raises').selectAll().execute();
    expect(row).toMatchObject({ brake: 'depth', value: 3, approver_id: 'U0BOSS', approver_channel: 'slack' });
    expect(row!.created_at).toBeInstanceOf(Date);

    await harness.press(harness.card(thread), 'approve', { user: 'U0ADA' });
    const child = await waitUntil('the child handed out', () =>
      harness.db.db.selectFrom('delegations').select(['depth', 'depth_limit', 'depth_raised']).executeTakeFirst(),
    );
    expect(child).toEqual({ depth: 1, depth_limit: 3, depth_raised: true });
  });
});

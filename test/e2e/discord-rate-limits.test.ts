import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const EDIT = { method: 'PATCH', route: '/channels/:channel/messages/:message' };
const POST = { method: 'POST', route: '/channels/:channel/messages' };
const slow = (id: string, duration: number, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: duration * 2 },
  ...extra,
});

describe('discord rate limits, end to end on postgres', () => {
  it('a 429 storm on card edits still ends every card in its final state, each retry after its retry_after', async () => {
    const plans = [1, 2, 3].map((n) => planReply([slow(`job${n}`, 1)], { summary: `Job ${n}` }));
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      minUpdateIntervalMs: 200,
      script: byRole({ planner: plans, synthesizer: ['Job done.', 'Job done.', 'Job done.'] }),
    });
    // Every edit of every card is refused six times in all, 0.4 s each, while the three runs go.
    h.discord.throttle(EDIT, { times: 6, retryAfterSeconds: 0.4 });
    const threads = [];
    for (const n of [1, 2, 3]) threads.push(await h.mention(`run job ${n}`));
    for (const thread of threads)
      await h.waitFor('the final card', () => shownText(h!.card(thread).message).includes('✅ Completed'), 30_000);
    await h.steward.idle();

    const edits = h.discord.callsTo(EDIT.method, EDIT.route);
    const refused = edits.filter((c) => c.status === 429);
    expect(refused).toHaveLength(6);
    // Each refused edit went again, and not before its retry_after had passed.
    for (const r of refused) {
      const retry = edits.find((c) => c.path === r.path && c.tick > r.tick);
      expect(retry, `a retry of ${r.path}`).toBeDefined();
      expect(retry!.tick - r.tick).toBeGreaterThanOrEqual(380);
    }
    // Final: no decision left, only "Save as workflow" (each run completed).
    for (const thread of threads) expect(h.buttons(h.card(thread))).toEqual(['wfsave']);
  });

  it('a report is posted while its card edit waits out a 429; the card then gets its final state', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' })],
        synthesizer: ['Said hi.'],
      }),
    });
    // The card's first edit (running) is held for 3 s; its later edits queue behind it on Discord's route.
    h.discord.throttle(EDIT, { times: 1, retryAfterSeconds: 3 });
    const thread = await h.mention('say hi');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')));
    await h.waitFor('the final card', () => shownText(h!.card(thread).message).includes('✅ Completed'), 10_000);
    const posted = h.discord
      .callsTo(POST.method, POST.route)
      .find((c) => c.status === 200 && JSON.stringify(c.body).includes('Said hi.'))!;
    const firstEdit = h.discord.callsTo(EDIT.method, EDIT.route)[0]!;
    const landed = h.discord.callsTo(EDIT.method, EDIT.route).find((c) => c.status === 200)!;
    expect(firstEdit.status).toBe(429);
    // The report went out while the card was still waiting for its retry_after.
    expect(posted.tick).toBeLessThan(landed.tick);
    expect(landed.tick - firstEdit.tick).toBeGreaterThanOrEqual(2_900);
  });
});

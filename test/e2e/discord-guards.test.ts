/**
 * Guards only Discord has: gateway resumes, chatter that never reaches the engine, huge tool outputs within message
 * limits, and a mention of the bot's role. Who may decide, double presses and long plans are test/chat/guards-spec.ts,
 * on both platforms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { reviewed, serverConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let cleanups: (() => void)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const fn of cleanups) fn();
  cleanups = [];
});

const FLOOD = join(import.meta.dirname, '../fixtures/flood-server.mjs');
const echoPlan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

describe('discord guards, end to end on postgres', () => {
  it('a gateway resume that delivers a mention and a press again starts one run and decides once', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
    });
    const mention = h.discord.messageCreate({ content: `<@${h.discord.botUser.id}> say hi`, mentionsBot: true });
    h.discord.dispatch('MESSAGE_CREATE', mention);
    const card = await h.waitFor('the card', () => h!.card(mention.id));
    const run = await onlyRun(h);
    const press = h.discord.buttonPress({ messageId: card.message.id, customId: h.componentId(card, 'approve') });
    h.discord.dispatch('INTERACTION_CREATE', press);
    // The connection drops; on resume the gateway delivers the mention and the press again.
    h.discord.dropConnection({ resumable: true });
    await h.waitFor('the resume', () => h!.discord.resumes >= 1);
    h.discord.dispatch('MESSAGE_CREATE', mention);
    h.discord.dispatch('INTERACTION_CREATE', press);
    const thread = mention.id;
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')));
    await h.steward.idle();
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([{ id: run.id }]);
    expect((await h.store.listDecisions(run.id)).map((d) => [d.action, d.accepted])).toEqual([['approve', true]]);
    expect(h.discord.identifies).toBe(1);
  });

  it('plain channel chatter, bot messages and thread chatter away from a card never reach the engine', async () => {
    h = await startDiscordHarness({ db: 'postgres', servers: [reviewed()], script: byRole({}) });
    const other = h.discord.user({ username: 'otherbot', bot: true });
    await h.deliver(h.discord.messageCreate({ content: 'lunch?' }));
    await h.deliver(
      h.discord.messageCreate({ content: `<@${h.discord.botUser.id}> beep`, author: other, mentionsBot: true }),
    );
    expect(h.llm.requests).toEqual([]);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });

  it('a 1 MB tool output held at a breakpoint and reported still gives valid messages, cut with a note', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-discord-flood-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const flood = serverConfig('flood', {
      command: process.execPath,
      args: [FLOOD],
      env: { CALLS_LOG: join(dir, 'calls.log') },
      risk: 'medium',
    });
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [flood],
      script: byRole({
        planner: [planReply([{ id: 'big', tool: 'flood.flood', args: { bytes: 1_000_000 } }], { summary: 'Read it' })],
        synthesizer: ['Read a very long page.'],
      }),
    });
    const thread = await h.mention('read the long page');
    const card = await h.waitFor('the card', () => h!.card(thread));
    await h.select(card, 'bp', ['big']);
    await h.press(h.card(thread), 'approve');
    const hold = await h.waitFor('the hold after big', () =>
      h!.replies(thread).find((m) => shownText(m.message).includes('Holding after step `big`')),
    );
    expect(shownText(hold.message).length).toBeLessThanOrEqual(2_000);
    expect(shownText(hold.message)).toMatch(/cut/);
    await h.press(hold, 'resume');
    await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => shownText(m.message).includes('Read a very long page.')),
    );
    await h.steward.idle();
    // Every body Steward sent was within Discord's limits (the harness fails the test otherwise, on close).
    expect(h.discord.calls.filter((c) => c.status === 400)).toEqual([]);
  });

  it("a mention of the bot's own role (what typing @Steward may pick) is a request like a mention of the bot", async () => {
    h = await startDiscordHarness({ db: 'postgres', servers: [reviewed()], script: byRole({ planner: [echoPlan] }) });
    const message = h.discord.messageCreate({
      content: `<@&${h.discord.botRoleId}> say hi`,
      mentionRoles: [h.discord.botRoleId],
    });
    await h.deliver(message);
    await h.waitFor('the card', () => h!.card(message.id));
    expect(h.llm.requests[0]!.lastUserText).toContain('say hi');
    expect(h.llm.requests[0]!.lastUserText).not.toContain(h.discord.botRoleId);
    expect(await h.db.db.selectFrom('runs').select('request').execute()).toEqual([{ request: 'say hi' }]);
  });
});

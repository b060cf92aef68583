import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, serverConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { OPS_ROLE, shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let cleanups: (() => void)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const fn of cleanups) fn();
  cleanups = [];
});

const FLOOD = join(import.meta.dirname, '../fixtures/flood-server.mjs');
const reviewed = () => everythingStdioConfig({ overrides: { risk: 'medium' } });
const echoPlan = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Say hi' });

describe('discord guards, end to end on postgres', () => {
  it("a stranger's Approve or Amend is refused privately and changes nothing; an approver by role may decide", async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);

    const approve = await h.press(card, 'approve', { user: h.bob });
    const amend = await h.press(card, 'amend', { user: h.bob });
    await h.waitFor('both refusals', () => h!.privateTexts(approve).length + h!.privateTexts(amend).length >= 2);
    for (const id of [approve, amend])
      expect(h.privateTexts(id).join(' ')).toMatch(
        new RegExp(`Only <@${h.ada.id}> or an approver can (approve|amend) this run`),
      );
    // No modal for someone who may not decide, and nothing public was posted about it.
    expect(h.discord.interaction(amend)!.callbackType).toBe(6);
    expect(h.lastModal()).toBeUndefined();
    expect((await h.store.getRun(run.id))!.status).toBe('awaiting_review');
    expect((await h.store.listDecisions(run.id)).map((d) => [d.actor.id, d.action, d.accepted])).toEqual([
      [h.bob.id, 'approve', false],
      [h.bob.id, 'amend', false],
    ]);

    // Bob holds the Ops role: as an approver by role, his press counts.
    await h.press(h.card(thread), 'approve', { user: h.bob, roles: [OPS_ROLE] });
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')));
    await h.steward.idle();
    expect((await h.store.getRun(run.id))!.status).toBe('completed');
  });

  it('a double click, or two people pressing at once, changes state once', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [echoPlan], synthesizer: ['Said hi.'] }),
    });
    const thread = await h.mention('say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);
    const customId = h.componentId(card, 'approve');
    await Promise.all([
      h.press(card, 'approve', { customId }),
      h.press(card, 'approve', { customId }),
      h.press(card, 'approve', { customId, user: h.boss }),
    ]);
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said hi.')));
    await h.steward.idle();
    const decisions = await h.store.listDecisions(run.id);
    expect(decisions.filter((d) => d.accepted)).toHaveLength(1);
    expect(decisions.filter((d) => !d.accepted)).toHaveLength(2);
    expect(h.calls.map((c) => c.name)).toEqual(['everything.echo']);
  });

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

  it('a 60-step plan gets a card Discord accepts, through approval to the end', async () => {
    const steps = Array.from({ length: 60 }, (_, i) => ({
      id: `echo_step_number_${i + 1}`,
      tool: 'everything.echo',
      args: { message: `message ${i + 1} ${'x'.repeat(200)}` },
      description: `echo number ${i + 1}, with a long description ${'y'.repeat(200)}`,
    }));
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      settings: { maxParallel: 8 },
      script: byRole({ planner: [planReply(steps)], synthesizer: ['All sixty echoed. ' + 'z'.repeat(9_000)] }),
    });
    const thread = await h.mention('echo sixty times');
    const card = await h.waitFor('the card', () => h!.card(thread));
    expect(shownText(card.message)).toContain('**60.**');
    await h.press(card, 'approve');
    await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => shownText(m.message).includes('All sixty echoed.')),
    );
    await h.steward.idle();
    await h.waitFor('the final card', () => shownText(h!.card(thread).message).includes('step 60/60'));
    // The long report came as at most three messages, the last one saying what was cut; Discord refused nothing.
    const replies = h.replies(thread);
    const report = replies.slice(replies.findIndex((m) => shownText(m.message).includes('All sixty echoed.')));
    expect(report).toHaveLength(3);
    expect(shownText(report[2]!.message)).toMatch(/cut: [\d,]+ more characters/);
    expect(h.discord.calls.filter((c) => c.status >= 400)).toEqual([]);
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

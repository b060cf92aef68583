import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { createAuditServer, onlyRun, planReply, storedStart, waitForStoredEnd } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// Every tool of this server counts as medium risk, so its plans wait for review.
const reviewed = () => everythingStdioConfig({ overrides: { risk: 'medium' } });
const slow = (id: string, duration: number, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: duration * 2 },
  description: 'a slow job',
  ...extra,
});

describe.each(['postgres', 'pglite'] as const)('discord, end to end on %s', (db) => {
  it('mention → thread on the message → plan card → Approve → the card is edited in place → report', async () => {
    const plan = planReply(
      [
        slow('slow', 2),
        { id: 'say', tool: 'everything.echo', args: { message: 'done @everyone' }, dependsOn: ['slow'] },
      ],
      { summary: 'Run the slow job, then say done' },
    );
    h = await startDiscordHarness({
      db,
      servers: [reviewed()],
      script: byRole({
        planner: [plan],
        synthesizer: ['The slow job finished. @everyone <@123456789012345678> **all good**'],
      }),
    });

    const thread = await h.mention('run the slow job and tell me');
    // The thread belongs to the request's message, and Steward showed it was working before its first message.
    const created = h.discord.threads.find((t) => t.id === thread)!;
    expect('parent_id' in created && created.parent_id).toBe(h.discord.channelId);
    expect(created.name).toBe('run the slow job and tell me');
    const card = await h.waitFor('the plan card', () => h!.card(thread));
    const typing = h.discord.callsTo('POST', '/channels/:channel/typing');
    expect(typing.length).toBeGreaterThanOrEqual(1);
    expect(typing[0]!.tick).toBeLessThan(h.discord.callsTo('POST', '/channels/:channel/messages')[0]!.tick);
    expect(shownText(card.message)).toContain('📋 Plan waiting for review · revision 0');
    expect(shownText(card.message)).toContain('everything.trigger-long-running-operation');
    expect(h.buttons(card)).toEqual(expect.arrayContaining(['approve', 'amend', 'cancel']));
    const run = await onlyRun(h);

    const press = await h.press(card, 'approve');
    // Answered well within Discord's 3 s, by a deferred update (the card itself is edited afterwards).
    const interaction = h.discord.interaction(press)!;
    const answered = h.discord.interactionResponses(press)[0]!;
    expect(answered.at - interaction.dispatchedAt).toBeLessThan(3_000);
    expect(interaction.callbackType).toBe(6);

    const report = await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => shownText(m.message).includes('all good')),
    );
    await h.steward.idle();
    await h.waitFor('the final card', () => shownText(h!.card(thread).message).includes('✅ Completed'));
    // The report's mentions are inert text, and nothing Steward sent could ping.
    expect(report.message.content).not.toMatch(/(^|[^\\])@everyone/);
    expect(shownText(report.message)).toContain('**all good**');

    // Live: the card was edited in place (one message), running then done, at most about one edit a second.
    const edits = h.discord
      .callsTo('PATCH', '/channels/:channel/messages/:message')
      .filter((c) => c.path.endsWith(card.message.id));
    expect(edits.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < edits.length - 1; i++) expect(edits[i]!.at - edits[i - 1]!.at).toBeGreaterThanOrEqual(900);
    expect(edits.some((e) => JSON.stringify(e.body).includes('▶️ Running'))).toBe(true);
    const final = h.card(thread);
    expect(shownText(final.message)).toContain('step 2/2');
    expect(h.buttons(final).filter((b) => ['approve', 'pause', 'stop'].includes(b))).toEqual([]);
    expect(h.discord.calls.filter((c) => c.status >= 400)).toEqual([]);

    expect((await h.store.getRun(run.id))!.status).toBe('completed');
    expect((await h.store.listDecisions(run.id)).map((d) => [d.action, d.accepted, d.actor.id])).toEqual([
      ['approve', true, h.ada.id],
    ]);
  });
});

describe('discord, end to end on postgres', () => {
  it('Amend opens a modal; its text re-plans and the same card shows the new revision, which then runs', async () => {
    const first = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }]);
    const second = planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hello, world' } }], {
      summary: 'Say hello, world',
    });
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [reviewed()],
      script: byRole({ planner: [first, second], synthesizer: ['Said it.'] }),
    });
    const thread = await h.mention('say hello');
    const card = await h.waitFor('the card', () => h!.card(thread));
    const run = await onlyRun(h);

    const press = await h.press(card, 'amend');
    expect(h.discord.interaction(press)!.callbackType).toBe(9);
    const modal = h.lastModal()!;
    expect(modal.title.length).toBeLessThanOrEqual(45);
    await h.submitModal({ 'amend-text': 'make it say hello, world' });
    await h.waitFor('revision 1 on the card', () => shownText(h!.card(thread).message).includes('revision 1'));
    expect(h.llm.requests.filter((r) => r.role === 'planner')[1]!.lastUserText).toContain('make it say hello, world');
    // Still one card in the thread: the new revision replaced the old in place.
    expect(h.replies(thread).filter((m) => (m.message.embeds ?? []).length > 0)).toEqual([]);

    await h.press(h.card(thread), 'approve');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Said it.')));
    await h.steward.idle();
    expect((await h.store.listDecisions(run.id)).map((d) => [d.action, d.revision, d.accepted])).toEqual([
      ['amend', 0, true],
      ['approve', 1, true],
    ]);
  });

  it('Pause holds the run after the step in flight; Resume finishes it; "ask me first" stores the preference', async () => {
    const plan = planReply([slow('one', 2), slow('two', 1, { dependsOn: ['one'] })]);
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Both ran.'] }),
    });
    const thread = await h.mention('run two slow jobs');
    const card = await h.waitFor(
      'the auto-started card',
      () => shownText(h!.card(thread).message).includes('▶️ Running') && h!.card(thread),
    );
    const run = await onlyRun(h);

    await h.press(card, 'pause');
    await h.waitFor('the paused card', () => shownText(h!.card(thread).message).includes('⏸️ Paused'));
    expect(await waitForStoredEnd(h.store, run.id, 'one')).toMatchObject({ status: 'succeeded' });
    expect((await h.store.listStepAttempts(run.id)).map((a) => a.stepId)).toEqual(['one']);
    expect(h.buttons(h.card(thread))).toContain('resume');

    const resumedAt = new Date();
    await h.press(h.card(thread), 'resume');
    await h.waitFor('the report', () => h!.replies(thread).find((m) => shownText(m.message).includes('Both ran.')));
    await h.steward.idle();
    expect((await h.store.getRun(run.id))!.status).toBe('completed');
    expect((await storedStart(h.store, run.id, 'two')).getTime()).toBeGreaterThanOrEqual(resumedAt.getTime());
  });

  it('Stop cancels the calls in flight at the tool server, starts nothing more, and keeps the finished results', async () => {
    const audit = createAuditServer();
    try {
      const plan = planReply([
        { id: 'quick', tool: 'audit.sleep', args: { ms: 10 } },
        { id: 'long_a', tool: 'audit.sleep', args: { ms: 20_000 }, dependsOn: ['quick'] },
        { id: 'long_b', tool: 'audit.sleep', args: { ms: 20_001 }, dependsOn: ['quick'] },
        { id: 'after', tool: 'audit.sleep', args: { ms: 1 }, dependsOn: ['long_a', 'long_b'] },
      ]);
      h = await startDiscordHarness({
        db: 'postgres',
        servers: [audit.config()],
        script: byRole({ planner: [plan], synthesizer: ['Stopped after quick.'] }),
      });
      const thread = await h.mention('quick then two long ones');
      await h.waitFor(
        'both long calls at the server',
        () => audit.entries().filter((e) => e.type === 'call' && (e.args?.ms as number) >= 20_000).length === 2,
      );
      const run = await onlyRun(h);

      await h.press(h.card(thread), 'stop');
      await h.waitFor('the report', () =>
        h!.replies(thread).find((m) => shownText(m.message).includes('Stopped after quick.')),
      );
      await h.steward.idle();
      // What the tool server itself saw: three calls, the two in flight cancelled, the last step never sent.
      const seen = audit.entries().map((e) => [e.type, e.args?.ms ?? null]);
      expect(
        seen
          .filter(([t]) => t === 'call')
          .map(([, ms]) => ms)
          .sort(),
      ).toEqual([10, 20_000, 20_001]);
      expect(seen.filter(([t]) => t === 'cancelled')).toHaveLength(2);
      expect((await h.store.getRun(run.id))!.status).toBe('stopped');
      const attempts = await h.store.listStepAttempts(run.id);
      expect(attempts.find((a) => a.stepId === 'quick')!.status).toBe('succeeded');
      expect(
        attempts
          .filter((a) => a.status === 'cancelled')
          .map((a) => a.stepId)
          .sort(),
      ).toEqual(['long_a', 'long_b']);
      await h.waitFor('the stopped card', () => shownText(h!.card(thread).message).includes('⏹️ Stopped'));
    } finally {
      audit.remove();
    }
  });
});

/** What a Discord user sees on a plan card: the steps, the buttons that are valid now, and the breakpoint picker. */
import { ButtonStyle, ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { createLiveCard, withProgress, withReport, withRunStatus } from '../../../src/bot/live-card-state.ts';
import { renderCard, toMessageOptions, type DiscordMessage } from '../../../src/bot/discord/discord-render.ts';
import { parseCustomId } from '../../../src/bot/discord/discord-actions.ts';
import { messageProblems } from '../../fakes/discord-limits.ts';
import { callProgressDetail } from '../../../src/engine/run/call-progress.ts';
import { createPlanCard, createProgress, createStep } from '../slack/fixtures.ts';
import { LIVE_MENTION } from './discord-inert.ts';

const NOW = 1_700_000_000_000;
const ADA = { id: '123456789012345678', name: 'Ada', channel: 'discord' };

type Component = {
  type: number;
  style?: number;
  label?: string;
  custom_id?: string;
  options?: { label: string; value: string; default?: boolean }[];
  placeholder?: string;
  max_values?: number;
};

function components(message: DiscordMessage): Component[][] {
  return message.components.map((row) => row.components as Component[]);
}

function buttons(message: DiscordMessage): { label: string; kind: string; style: number | undefined }[] {
  return components(message)
    .flat()
    .filter((c) => c.type === ComponentType.Button)
    .map((c) => ({ label: c.label ?? '', kind: parseCustomId(c.custom_id)?.kind ?? '?', style: c.style }));
}

function select(message: DiscordMessage): Component | undefined {
  return components(message)
    .flat()
    .find((c) => c.type === ComponentType.StringSelect);
}

describe('the plan card', () => {
  it('says a reply must mention the bot when Steward cannot read plain replies, waiting and running', () => {
    const waiting = createLiveCard(createPlanCard({ requester: ADA }), NOW);
    const running = withRunStatus(
      waiting,
      { kind: 'runStatus', runId: waiting.card.runId, status: 'running', actions: ['pause', 'stop'] },
      NOW,
    );
    for (const live of [waiting, running]) {
      expect(renderCard(live, NOW).embeds[0]?.footer?.text).not.toContain('mentioning');
      expect(renderCard(live, NOW, { mentionToReply: 'Steward' }).embeds[0]?.footer?.text).toMatch(
        /[Rr]eply in this thread, mentioning @Steward, to/,
      );
    }
  });

  it('waiting for review: summary, numbered steps, Approve green, Amend with amendments left, Cancel red', () => {
    const live = createLiveCard(createPlanCard({ requester: ADA }), NOW);
    const message = renderCard(live, NOW);
    expect(messageProblems(message)).toEqual([]);
    const [embed] = message.embeds;
    expect(embed?.title).toBe('Say hello twice');
    expect(embed?.author?.name).toBe('📋 Plan waiting for review · revision 0');
    expect(embed?.description).toContain('⚪ **1.** `step_1` `everything.echo`');
    expect(embed?.description).toContain('*after step\\_1*');
    expect(embed?.description).toContain('requested by <@123456789012345678>');
    expect(embed?.footer?.text).toMatch(/3 amendment\(s\) left/);
    expect(buttons(message).slice(0, 3)).toEqual([
      { label: 'Approve', kind: 'approve', style: ButtonStyle.Success },
      { label: 'Amend (3 left)', kind: 'amend', style: ButtonStyle.Secondary },
      { label: 'Cancel', kind: 'cancel', style: ButtonStyle.Danger },
    ]);
    expect(
      buttons(message)
        .slice(3)
        .map((b) => b.kind),
    ).toEqual(['edit', 'history', 'help']);
    expect(message.allowed_mentions).toEqual({ parse: [] });
  });

  it('every component names the card it sits on, so an old card is recognised as stale', () => {
    const card = createPlanCard({ revision: 4 });
    for (const c of components(renderCard(createLiveCard(card, NOW), NOW)).flat())
      expect(parseCustomId(c.custom_id)).toMatchObject({ runId: card.runId, revision: 4 });
  });

  it('running after starting at once: Pause/Stop, "Ask me first next time", time, finished steps not offered', () => {
    let live = createLiveCard(
      createPlanCard({ needsReview: false, autoStarted: true, actions: ['pause', 'stop'], risk: 'low' }),
      NOW,
    );
    live = withProgress(live, createProgress({ stepId: 'step_1', status: 'succeeded', finished: 1 }), NOW);
    const message = renderCard(live, NOW + 65_000);
    expect(messageProblems(message)).toEqual([]);
    expect(buttons(message).map((b) => b.label)).toEqual([
      'Pause',
      'Stop',
      'Edit plan',
      'History',
      'Ask me first next time',
      'Help',
    ]);
    expect(message.embeds[0]?.description).toContain('✅ **1.**');
    expect(message.embeds[0]?.footer?.text).toMatch(/Low risk: started at once.*⏱️ 1 min 05 s/);
    expect(select(message)?.options?.map((o) => o.value)).toEqual(['step_2']);
  });

  it("a running step's line shows its server's latest progress, its message escaped as any tool text", () => {
    let live = createLiveCard(createPlanCard({ needsReview: false, actions: ['pause', 'stop'] }), NOW);
    const detail = callProgressDetail('srv.copy', { progress: 3, total: 8, message: '**all** done, @everyone <#1>' });
    live = withProgress(live, createProgress({ stepId: 'step_1', status: 'running', detail }), NOW);
    const message = renderCard(live, NOW);
    expect(messageProblems(message)).toEqual([]);
    const description = message.embeds[0]?.description ?? '';
    expect(description).toContain('⏳ **1.** `step_1`');
    expect(description).toContain(
      '— running: calling srv.copy: 3 / 8, \\*\\*all\\*\\* done, @\u200beveryone <\u200b#1>',
    );
    expect(description).not.toMatch(LIVE_MENTION);
  });

  it('the breakpoint select is a multi-select with current breakpoints pre-selected', () => {
    const live = createLiveCard(createPlanCard({ breakpoints: ['step_2'] }), NOW);
    const picker = select(renderCard(live, NOW));
    expect(picker?.placeholder).toBe('Pause after step…');
    expect(picker?.max_values).toBe(2);
    expect(picker?.options).toEqual([
      expect.objectContaining({ label: '1. step_1', value: 'step_1' }),
      { label: '2. step_2', value: 'step_2', description: 'everything.echo', default: true },
    ]);
    expect(picker?.options?.[0]?.default).toBeUndefined();
  });

  it('a suggested breakpoint is offered with its reason, an "Add suggested breakpoints" button and how to stop the offers, gone once taken', () => {
    const why = 'you stopped a run using everything.echo before';
    const card = createPlanCard({ suggestedBreakpoints: [{ stepId: 'step_1', tool: 'everything.echo', why }] });
    const offered = renderCard(createLiveCard(card, NOW), NOW);
    expect(messageProblems(offered)).toEqual([]);
    expect(offered.embeds[0]?.description).toContain(
      `**Suggested breakpoints** (not set: Approve does not stop at them)\n• before step\\_1: ${why}\n*\`/steward suggestions off\` stops these offers.*`,
    );
    expect(buttons(offered).map((b) => [b.label, b.kind])).toContainEqual(['Add suggested breakpoints', 'suggested']);
    const ref = parseCustomId(
      components(offered)
        .flat()
        .find((c) => c.label === 'Add suggested breakpoints')?.custom_id,
    );
    expect(ref).toMatchObject({ runId: card.runId, revision: card.revision });
    // Taken: the card shows the breakpoint as set, and offers nothing more.
    const taken = renderCard(createLiveCard({ ...card, breakpointsBefore: ['step_1'] }, NOW), NOW);
    expect(buttons(taken).map((b) => b.label)).not.toContain('Add suggested breakpoints');
    expect(taken.embeds[0]?.description).not.toContain('Suggested breakpoints');
    expect(taken.embeds[0]?.description).not.toContain('suggestions off');
    expect(select(taken)?.options?.[0]).toMatchObject({ value: 'step_1', default: true });
  });

  it('a 60-step plan lists what fits, counts the rest, and offers the first 25 steps to pause after', () => {
    const steps = Array.from({ length: 60 }, (_, i) =>
      createStep(i + 1, {
        description: 'a long description of what this step does '.repeat(5),
        argsPreview: `{"text":"${'x'.repeat(150)}"}`,
      }),
    );
    const card = createPlanCard({
      steps,
      note: 'n'.repeat(3_000),
      risks: ['r'.repeat(900)],
      warnings: ['w'.repeat(900)],
    });
    const message = renderCard(createLiveCard(card, NOW), NOW);
    expect(messageProblems(message)).toEqual([]);
    expect(message.embeds[0]?.description).toMatch(/\*… and \d+ more steps\*/);
    const picker = select(message);
    expect(picker?.options).toHaveLength(25);
    expect(picker?.placeholder).toBe('Pause after step… (the first 25 of 60 steps not yet run)');
  });

  it('a finished card has no components and says how it ended', () => {
    let live = createLiveCard(createPlanCard({ needsReview: false, actions: ['pause', 'stop'] }), NOW);
    live = withRunStatus(
      live,
      { kind: 'runStatus', runId: live.card.runId, status: 'stopped', actions: [] },
      NOW + 1_000,
    );
    live = withReport(live, { kind: 'report', runId: live.card.runId, status: 'stopped', text: 'done' }, NOW + 2_000);
    const message = renderCard(live, NOW + 9_000);
    expect(message.components).toEqual([]);
    expect(message.embeds[0]?.author?.name).toBe('⏹️ Stopped · revision 0');
  });

  it('paused: Resume in blue, controls still there, no "ask me first"', () => {
    const live = createLiveCard(createPlanCard({ needsReview: false, actions: ['resume', 'stop'] }), NOW);
    const message = renderCard(live, NOW);
    expect(buttons(message).map((b) => [b.label, b.style])).toEqual([
      ['Resume', ButtonStyle.Primary],
      ['Stop', ButtonStyle.Danger],
      ['Edit plan', ButtonStyle.Secondary],
      ['History', ButtonStyle.Secondary],
      ['Help', ButtonStyle.Secondary],
    ]);
  });

  it('as discord.js options, allowedMentions is what discord.js turns into allowed_mentions', () => {
    const options = toMessageOptions(renderCard(createLiveCard(createPlanCard(), NOW), NOW));
    expect(options.allowedMentions).toEqual({ parse: [] });
    expect(options).not.toHaveProperty('allowed_mentions');
    expect(options).not.toHaveProperty('content');
  });
});

import type { types } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { createLiveCard, withProgress, withReport } from '../../../src/bot/live-card-state.ts';
import { PlanBlockSwitch } from '../../../src/bot/slack/slack-plan-block.ts';
import { LiveCards } from '../../../src/bot/live-cards.ts';
import { renderCard, type SlackMessage } from '../../../src/bot/slack/slack-render.ts';
import { blockProblems } from './block-kit-limits.ts';
import { createPlanCard, createProgress, createStep } from './fixtures.ts';

const NOW = 1_700_000_000_000;
const RUN = createPlanCard().runId;

function plan(message: SlackMessage): types.PlanBlock | undefined {
  return message.blocks.find((b): b is types.PlanBlock => b.type === 'plan');
}

function tasks(message: SlackMessage): types.TaskCardBlock[] {
  return (plan(message)?.tasks ?? []) as types.TaskCardBlock[];
}

function textOf(r: types.RichTextBlock | undefined): string {
  return JSON.stringify(r?.elements ?? []);
}

function expectValid(message: SlackMessage): void {
  const { problems, textLength } = blockProblems(message.blocks, 50);
  expect(problems).toEqual([]);
  expect(textLength).toBeLessThanOrEqual(12_000);
}

describe('plan block on the live card', () => {
  it('shows the steps as task cards (tool and arguments as details) and keeps the rest of the card', () => {
    const card = createPlanCard({ breakpoints: ['step_1'] });
    const message = renderCard(createLiveCard(card, NOW), NOW, { planBlocks: true });
    expectValid(message);
    expect(tasks(message).map((t) => [t.task_id, t.title, t.status])).toEqual([
      ['step_1', '1. say hello 1', 'pending'],
      ['step_2', '2. say hello 2', 'pending'],
    ]);
    expect(textOf(tasks(message)[0]!.details)).toContain('everything.echo {\\"message\\":\\"hello 1\\"}');
    expect(textOf(tasks(message)[0]!.details)).toContain('breakpoint after');
    expect(textOf(tasks(message)[1]!.details)).toContain('after step_1');
    // The step lines are gone; header, buttons and steering row stay.
    const types = message.blocks.map((b) => b.type);
    expect(types[0]).toBe('header');
    expect(types.filter((t) => t === 'plan')).toHaveLength(1);
    expect(types.filter((t) => t === 'actions')).toHaveLength(2);
    const sameWithout = renderCard(createLiveCard(card, NOW), NOW);
    expect(sameWithout.blocks.some((b) => b.type === 'plan')).toBe(false);
    expect(JSON.stringify(sameWithout.blocks)).toContain('say hello 1');
  });

  it('maps each step state to the task status and shows a failed step’s reason as output', () => {
    let live = createLiveCard(createPlanCard({ needsReview: false, actions: ['stop'] }), NOW);
    live = withProgress(live, createProgress({ stepId: 'step_1', status: 'succeeded', detail: '', finished: 1 }), NOW);
    live = withProgress(
      live,
      createProgress({ stepId: 'step_2', status: 'running', detail: 'calling', finished: 1 }),
      NOW,
    );
    let message = renderCard(live, NOW, { planBlocks: true });
    expect(tasks(message).map((t) => t.status)).toEqual(['complete', 'in_progress']);
    expect(plan(message)!.title).toBe('Steps (1/2 done)');
    live = withProgress(
      live,
      createProgress({ stepId: 'step_2', status: 'failed', detail: 'tool timed out', finished: 2 }),
      NOW,
    );
    live = withReport(live, { kind: 'report', runId: RUN, status: 'failed', text: 'x' }, NOW);
    message = renderCard(live, NOW, { planBlocks: true });
    expectValid(message);
    expect(tasks(message)[1]!.status).toBe('error');
    expect(textOf(tasks(message)[1]!.output)).toContain('tool timed out');
  });

  it('keeps mentions and markup in arguments as plain rich text, cut to the documented 256 characters', () => {
    const hostile = `{"to":"<!channel> <@U0BOSS> <https://evil.example|click>","pad":"${'p'.repeat(600)}"}`;
    const card = createPlanCard({ steps: [createStep(1, { argsPreview: hostile, description: 'x\n'.repeat(300) })] });
    const message = renderCard(createLiveCard(card, NOW), NOW, { planBlocks: true });
    expectValid(message);
    const details = tasks(message)[0]!.details!;
    const section = details.elements[0] as { elements: { type: string; text: string }[] };
    // One text element: Slack does not parse text elements, so nobody is pinged and no link is made.
    expect(section.elements.map((e) => e.type)).toEqual(['text']);
    expect(section.elements[0]!.text).toContain('<!channel> <@U0BOSS>');
    expect(section.elements[0]!.text.length).toBeLessThanOrEqual(256);
    expect(tasks(message)[0]!.title.length).toBeLessThanOrEqual(150);
  });

  it('a plan of more than 50 steps (what one plan block holds) keeps the step list; 50 steps fit', () => {
    const steps = (n: number) => Array.from({ length: n }, (_, i) => createStep(i + 1));
    const fifty = renderCard(createLiveCard(createPlanCard({ steps: steps(50) }), NOW), NOW, { planBlocks: true });
    expectValid(fifty);
    expect(tasks(fifty)).toHaveLength(50);
    const more = renderCard(createLiveCard(createPlanCard({ steps: steps(51) }), NOW), NOW, { planBlocks: true });
    expectValid(more);
    expect(plan(more)).toBeUndefined();
    expect(JSON.stringify(more.blocks)).toContain('say hello 51');
  });
});

describe('plan block switch', () => {
  const refusal = Object.assign(new Error('An API error occurred: invalid_blocks'), {
    data: { ok: false, error: 'invalid_blocks' },
  });

  /** Live cards drawn as the Slack channel draws them, posting through `post`. */
  function cardsWith(plans: PlanBlockSwitch, post: (m: SlackMessage) => Promise<string>) {
    return new LiveCards<SlackMessage>(
      { post: (_c, _t, m) => post(m), update: () => Promise.resolve() },
      {
        render: (live, now) => renderCard(live, now, { planBlocks: plans.enabled }),
        refused: (err, m) => plans.refusedPlan(err, m),
      },
      { minIntervalMs: 10, now: () => NOW, log: () => {} },
    );
  }

  it('after Slack refuses a plan block, sends the same card again as step lines at once and logs once', async () => {
    const logs: string[] = [];
    const plans = new PlanBlockSwitch(true, (m) => logs.push(m));
    const sent: SlackMessage[] = [];
    const cards = cardsWith(plans, async (m) => {
      sent.push(m);
      if (plan(m)) throw refusal;
      return 'ts-1';
    });
    await cards.show('C1', '1.0', createPlanCard({ runId: 'run-1' }));
    expect(sent.map((m) => Boolean(plan(m)))).toEqual([true, false]);
    expect(plans.enabled).toBe(false);
    await cards.show('C1', '2.0', createPlanCard({ runId: 'run-2' }));
    expect(sent).toHaveLength(3);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('invalid_blocks');
  });

  it('other failures are not retried and leave plan blocks on', async () => {
    const plans = new PlanBlockSwitch(true, () => {});
    const limited = Object.assign(new Error('ratelimited'), { data: { ok: false, error: 'ratelimited' } });
    await expect(
      cardsWith(plans, () => Promise.reject(limited)).show('C1', '1.0', createPlanCard({ runId: 'run-1' })),
    ).rejects.toThrow('ratelimited');
    expect(plans.enabled).toBe(true);
    // A refusal of a card with no plan block is about something else: it is the caller's to see.
    expect(plans.refusedPlan(refusal, renderCard(createLiveCard(createPlanCard(), NOW), NOW))).toBe(false);
    expect(plans.enabled).toBe(true);
  });
});

describe('plan block limits (fake Slack)', () => {
  const task = (id: string, extra: Record<string, unknown> = {}) => ({
    type: 'task_card',
    task_id: id,
    title: 'a task',
    status: 'pending',
    ...extra,
  });
  const check = (b: Record<string, unknown>) => blockProblems([b], 50).problems;

  it('refuses what Slack documents as invalid', () => {
    expect(check({ type: 'plan', title: 'p', tasks: [task('a')] })).toEqual([]);
    expect(check({ type: 'plan', title: '', tasks: [] })).toHaveLength(1);
    const many = Array.from({ length: 51 }, (_, i) => task(`t${i}`));
    expect(check({ type: 'plan', title: 'p', tasks: many }).join()).toContain('no more than 50');
    expect(check({ type: 'plan', title: 'p', tasks: [task('a'), task('a')] }).join()).toContain('not unique');
    expect(check({ type: 'plan', title: 'p', tasks: [task('a', { status: 'done' })] }).join()).toContain('status');
    const rich = (n: number, text: string) => ({
      type: 'rich_text',
      elements: Array.from({ length: n }, () => ({ type: 'rich_text_section', elements: [{ type: 'text', text }] })),
    });
    expect(check(task('a', { details: rich(1, 'ok') }))).toEqual([]);
    expect(check(task('a', { details: rich(2, 'ok') })).join()).toContain('details');
    expect(check(task('a', { output: rich(1, 'o'.repeat(257)) })).join()).toContain('256');
  });
});

/**
 * "as <person>" beside each step of a server that connects per person, on every channel's card: the plan card says
 * whose own account the step runs with (the requester, never an approver), and a step on a shared server says nothing.
 */
import { describe, expect, it } from 'vitest';
import { renderConsole } from '../../src/bot/console-render.ts';
import { renderCard as renderDiscord } from '../../src/bot/discord/discord-render.ts';
import { createLiveCard } from '../../src/bot/live-card-state.ts';
import { planBlock } from '../../src/bot/slack/slack-plan-block.ts';
import { renderCard as renderSlack } from '../../src/bot/slack/slack-render.ts';
import { validatePlan } from '../../src/engine/plan/validate-plan.ts';
import { toPlanCard } from '../../src/engine/run/plan-card.ts';
import type { Actor } from '../../src/engine/types.ts';
import { createPlan, createTool } from '../engine/fixtures.ts';
import { messageProblems } from '../fakes/discord-limits.ts';
import { blockProblems } from './slack/block-kit-limits.ts';
import { allTexts } from './slack/fixtures.ts';

const NOW = 1_700_000_000_000;

function cardFor(requester: Actor) {
  const plan = createPlan([
    { id: 'me', tool: 'tracker.whoami' },
    { id: 'echo', tool: 'srv.echo', dependsOn: ['me'] },
  ]);
  const tools = [createTool('tracker.whoami', { policy: { allowed: true, timeoutMs: 1000, perPerson: true } })];
  const v = validatePlan(plan, [...tools, createTool('srv.echo')]);
  if (!v.ok) throw new Error(v.error.join('; '));
  expect(v.value.perPerson).toEqual(['me']);
  return toPlanCard('r1', 1, v.value, { needsReview: true, amendmentsLeft: 3, requester });
}

describe('"as <person>" on the plan card', () => {
  it('the engine marks the steps of a server that connects per person with the requester', () => {
    const ada: Actor = { channel: 'slack', id: 'U0ADA', name: 'ada' };
    const card = cardFor(ada);
    expect(card.steps.map((s) => [s.id, s.as])).toEqual([
      ['me', ada],
      ['echo', undefined],
    ]);
  });

  it('the console says it beside the step', () => {
    const text = renderConsole(cardFor({ channel: 'console', id: 'console-user', name: 'you' }));
    expect(text).toMatch(/^1\. \[me\] tracker\.whoami as you /m);
    expect(text).toMatch(/^2\. \[echo\] srv\.echo \{/m);
  });

  it('Slack names the requester with a mention in the step line, and in words on a plan block', () => {
    const live = createLiveCard(cardFor({ channel: 'slack', id: 'U0ADA' }), NOW);
    const message = renderSlack(live, NOW);
    expect(blockProblems(message.blocks, 50).problems).toEqual([]);
    const lines = allTexts(message.blocks).join('\n').split('\n');
    expect(lines.find((l) => l.includes('`me`'))).toContain('`tracker.whoami` as <@U0ADA>');
    expect(lines.find((l) => l.includes('`echo`'))).not.toContain(' as ');
    const tasks = planBlock(live).tasks ?? [];
    expect(JSON.stringify(tasks[0]?.details)).toContain('tracker.whoami as the requester');
    expect(JSON.stringify(tasks[1]?.details)).not.toContain(' as ');
  });

  it('Discord names the requester with a mention (which an embed never pings)', () => {
    const live = createLiveCard(cardFor({ channel: 'discord', id: '123456789012345678', name: 'Ada' }), NOW);
    const message = renderDiscord(live, NOW);
    expect(messageProblems(message)).toEqual([]);
    const text = JSON.stringify(message.embeds);
    expect(text).toContain('`tracker.whoami` as <@123456789012345678>');
    expect(text).not.toMatch(/srv\.echo` as /);
  });
});

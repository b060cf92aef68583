import { describe, expect, it } from 'vitest';
import {
  createLiveCard,
  isHeldMidRun,
  withNewRevision,
  withProgress,
  withReport,
  withRunStatus,
} from '../../../src/bot/live-card-state.ts';
import { LiveCards } from '../../../src/bot/live-cards.ts';
import { renderCard, type SlackMessage } from '../../../src/bot/slack/slack-render.ts';
import { allTexts, createPlanCard, createProgress } from './fixtures.ts';

function recorder(delayMs = 5, minIntervalMs = 100) {
  const sent: Array<{ call: 'post' | 'update'; at: number; text: string }> = [];
  const wait = () => new Promise((r) => setTimeout(r, delayMs));
  const poster = {
    post: async (_c: string, _t: string, m: SlackMessage) => (
      await wait(),
      sent.push({ call: 'post', at: Date.now(), text: allTexts(m.blocks).join('\n') }),
      '1.000001'
    ),
    update: async (_c: string, _ts: string, latest: () => SlackMessage) => {
      await wait();
      sent.push({ call: 'update', at: Date.now(), text: allTexts(latest().blocks).join('\n') });
    },
  };
  return {
    sent,
    cards: new LiveCards(
      poster,
      { render: (l, now) => renderCard(l, now) },
      { minIntervalMs, now: Date.now, log: () => undefined },
    ),
  };
}

describe('live cards', () => {
  it('a burst of progress becomes at most one update per interval, and the last state is always sent', async () => {
    const { sent, cards } = recorder();
    const card = createPlanCard({ needsReview: false, actions: ['pause', 'stop'] });
    await cards.show('C1', '1.0', card);
    for (let i = 1; i <= 30; i++) {
      cards.change(card.runId, (l, now) =>
        withProgress(
          l,
          createProgress({ stepId: i % 2 ? 'step_1' : 'step_2', status: 'running', finished: i, total: 30 }),
          now,
        ),
      );
      await new Promise((r) => setTimeout(r, 10));
    }
    await cards.settled(card.runId);
    const updates = sent.filter((s) => s.call === 'update');
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.length).toBeLessThanOrEqual(5);
    const times = sent.map((s) => s.at);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(95);
    expect(updates.at(-1)!.text).toContain('Step 30/30');
  });

  it('changes made while the card is still being posted are sent once it exists; a finished card is forgotten', async () => {
    const { sent, cards } = recorder(50);
    const card = createPlanCard({ needsReview: false, actions: ['pause', 'stop'] });
    const showing = cards.show('C1', '1.0', card);
    cards.change(card.runId, (l, now) => withProgress(l, createProgress({ status: 'succeeded', finished: 1 }), now));
    await showing;
    expect(cards.hasActiveCard('C1', '1.0')).toBe(true);
    expect(cards.hasActiveCard('C1', '2.0')).toBe(false);
    cards.change(card.runId, (l, now) =>
      withReport(l, { kind: 'report', runId: card.runId, status: 'completed', text: '' }, now),
    );
    await cards.settled(card.runId);
    expect(sent.map((s) => s.call)).toEqual(['post', 'update']);
    expect(sent[1]!.text).toContain('✅ Completed');
    expect(cards.hasActiveCard('C1', '1.0')).toBe(false);
    cards.change(card.runId, (l) => l);
    await cards.settled(card.runId);
    expect(sent).toHaveLength(2);
  });

  it('a new revision replaces the card in place', async () => {
    const { sent, cards } = recorder();
    await cards.show('C1', '1.0', createPlanCard());
    await cards.show('C1', '1.0', createPlanCard({ revision: 1, summary: 'Say hello three times' }));
    expect(sent.map((s) => s.call)).toEqual(['post', 'update']);
    expect(sent[1]!.text).toContain('revision 1');
    expect(cards.summaryOf(createPlanCard().runId)).toBe('Say hello three times');
  });

  it('a revision while running keeps what the unchanged steps did; a revision at review starts afresh', () => {
    const running = createPlanCard({ needsReview: false, autoStarted: true, actions: ['pause', 'stop'] });
    let live = withProgress(
      createLiveCard(running, 1_000),
      createProgress({ status: 'succeeded', finished: 1 }),
      2_000,
    );
    const revised = createPlanCard({
      revision: 1,
      needsReview: false,
      actions: ['pause', 'stop'],
      steps: [running.steps[0]!, { ...running.steps[1]!, id: 'step_3' }],
    });
    live = withNewRevision(live, revised, 3_000);
    expect(live.steps).toEqual({
      step_1: { status: 'succeeded', detail: 'calling everything.echo' },
      step_3: { status: 'pending', detail: '' },
    });
    expect([live.finished, live.total, live.startedAt, live.autoStarted]).toEqual([1, 2, 1_000, true]);
    const atReview = withNewRevision(createLiveCard(createPlanCard(), 1_000), createPlanCard({ revision: 1 }), 3_000);
    expect([atReview.status, atReview.startedAt, atReview.finished]).toEqual(['awaiting_review', null, 0]);
  });

  it('steps held mid-run after an amendment: finished steps stay finished, and Stop stays on the card', () => {
    // Once, a card that waits for review started afresh: every finished step showed as pending, and Stop was gone.
    const running = createPlanCard({ needsReview: false, actions: ['pause', 'stop'] });
    let live = withProgress(
      createLiveCard(running, 1_000),
      createProgress({ status: 'succeeded', finished: 1 }),
      2_000,
    );
    const held = createPlanCard({
      revision: 1,
      needsReview: true,
      actions: ['approve', 'stop'],
      steps: [
        { ...running.steps[0]!, status: 'succeeded', detail: '' },
        { ...running.steps[1]!, id: 'step_3' },
      ],
    });
    live = withNewRevision(live, held, 3_000);
    expect(live.steps.step_1!.status).toBe('succeeded');
    expect(live.steps.step_3!.status).toBe('pending');
    expect([live.status, live.finished, live.total, live.startedAt]).toEqual(['awaiting_review', 1, 2, 1_000]);
    expect(isHeldMidRun(live)).toBe(true);
    expect(live.actions).toEqual(['approve', 'stop']);
  });

  it('a card shown afresh mid-run (after a restart) shows what the engine says each step did', () => {
    const base = createPlanCard();
    const card = createPlanCard({
      needsReview: false,
      actions: ['pause', 'stop'],
      steps: [{ ...base.steps[0]!, status: 'failed', detail: 'timed out' }, base.steps[1]!],
    });
    const live = createLiveCard(card, 5_000);
    expect(live.steps).toEqual({
      step_1: { status: 'failed', detail: 'timed out' },
      step_2: { status: 'pending', detail: '' },
    });
    expect([live.finished, live.startedAt]).toEqual([1, 5_000]);
    // Running, not "started at once": that was said by the card of its first offer.
    expect(live.autoStarted).toBe(false);
  });

  it('a final state goes at once, without the per-card pause, and the report after it sends nothing more', async () => {
    const { sent, cards } = recorder(5, 5_000);
    const card = createPlanCard({ needsReview: false, actions: ['pause', 'stop'] });
    await cards.show('C1', '1.0', card);
    cards.change(card.runId, (l, now) => withProgress(l, createProgress({ status: 'succeeded', finished: 1 }), now));
    cards.change(card.runId, (l, now) =>
      withRunStatus(l, { kind: 'runStatus', runId: card.runId, status: 'completed', actions: [] }, now),
    );
    cards.change(card.runId, (l, now) =>
      withReport(l, { kind: 'report', runId: card.runId, status: 'completed', text: '' }, now),
    );
    await cards.settled(card.runId);
    expect(sent.map((s) => s.call)).toEqual(['post', 'update']);
    expect(sent[1]!.at - sent[0]!.at).toBeLessThan(1_000);
    expect(sent[1]!.text).toContain('✅ Completed');
  });
});

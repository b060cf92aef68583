/**
 * The estimate line people see on a plan card in Slack and Discord: before the run, with what history it came from,
 * and against what it took after.
 */
import { describe, expect, it } from 'vitest';
import { estimateText } from '../../src/bot/card-estimate.ts';
import { renderCard as renderDiscord } from '../../src/bot/discord/discord-render.ts';
import { createLiveCard, withRunStatus } from '../../src/bot/live-card-state.ts';
import { renderCard as renderSlack } from '../../src/bot/slack/slack-render.ts';
import type { PlanEstimate } from '../../src/engine/estimate-history.ts';
import { allTexts, createPlanCard } from './slack/fixtures.ts';

const NOW = 1_700_000_000_000;
const estimate: PlanEstimate = {
  durationMs: { low: 3_000, high: 8_000 },
  tokens: { low: 2_100, high: 3_400 },
  costMicroUsd: { low: 2_000, high: 4_000 },
  noHistory: ['fs.write_file'],
  basis: [
    { step: 'list', from: 'args' },
    { step: 'read', from: 'args' },
    { step: 'search', from: 'similar' },
  ],
};
const LINE =
  'Estimate: 3.0–8.0 s from past runs with the same arguments (search: similar arguments) · 2.1k–3.4k tokens · $0.0020–0.0040 · no history for fs.write_file';

describe("a card's estimate", () => {
  const live = createLiveCard(createPlanCard({ estimate }), NOW);

  it('is one short line on the Slack and the Discord card', () => {
    expect(estimateText(live)).toBe(LINE);
    expect(allTexts(renderSlack(live, NOW).blocks).join('\n')).toContain(LINE);
    // Discord escapes markdown in it (the dots and dashes stay readable).
    expect(renderDiscord(live, NOW).embeds[0]?.description).toContain(
      'Estimate: 3.0–8.0 s from past runs with the same arguments (search: similar arguments)',
    );
  });

  it("after the run, says how long it took against the estimate, by the engine's measure", () => {
    const running = withRunStatus(live, { kind: 'runStatus', runId: 'r', status: 'running', actions: [] }, NOW);
    const change = { kind: 'runStatus' as const, runId: 'r', status: 'completed' as const, actions: [] };
    const ended = withRunStatus(running, { ...change, took: { ms: 5_200, estimate } }, NOW + 6_000);
    expect(estimateText(ended)).toBe('Took 5.2 s, estimated 3.0–8.0 s');
    expect(allTexts(renderSlack(ended, NOW).blocks).join('\n')).toContain('Took 5.2 s, estimated 3.0–8.0 s');
    // A card that missed the engine's measure uses the times it saw itself.
    expect(estimateText(withRunStatus(running, change, NOW + 6_000))).toBe('Took 6.0 s, estimated 3.0–8.0 s');
  });

  it('is absent from a card without history to go on', () => {
    const plain = createLiveCard(createPlanCard(), NOW);
    expect(estimateText(plain)).toBeNull();
    expect(allTexts(renderSlack(plain, NOW).blocks).join('\n')).not.toContain('Estimate');
  });
});

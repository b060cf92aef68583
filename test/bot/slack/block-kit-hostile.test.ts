/**
 * Whatever text a model, a tool or a person supplies, every message Steward renders for Slack stays within Block
 * Kit's limits and shows no live mention, broadcast or link: the only `<…>` left is the mention Steward itself adds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLiveCard, withNewRevision, withProgress } from '../../../src/bot/live-card-state.ts';
import { callProgressDetail } from '../../../src/engine/run/call-progress.ts';
import { renderCard, type SlackMessage } from '../../../src/bot/slack/slack-render.ts';
import {
  renderAmendModal,
  renderAnswer,
  renderBreakpoint,
  renderNotice,
  renderReport,
} from '../../../src/bot/slack/slack-thread-render.ts';
import { blockProblems, viewProblems } from './block-kit-limits.ts';
import { allTexts, createPlanCard, createProgress, createStep } from './fixtures.ts';

const NOW = 1_700_000_000_000;
const ADA = { id: 'U0ADA', channel: 'slack' };

/** Text built from what breaks naive escaping and cutting: mentions, links, escapes, emoji, and huge runs. */
const hostile = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('<!channel>', '<!here>', '<@U0EVE>', '<https://x.test|click>', '&amp;') },
      { weight: 6, arbitrary: fc.constantFrom('<', '>', '&', '😀', '👩‍👩‍👧', '`', '```', '*', '\n', ' ', 'a') },
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 1, arbitrary: fc.constantFrom('<'.repeat(20_000), '😀'.repeat(9_000), 'x'.repeat(60_000)) },
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

function expectSafe(message: SlackMessage, maxBlocks = 50): void {
  const { problems, textLength } = blockProblems(message.blocks, maxBlocks);
  expect(problems).toEqual([]);
  expect(textLength).toBeLessThanOrEqual(12_000);
  expect(message.text.length).toBeLessThanOrEqual(40_000);
  expectInert(message.text);
  for (const { type, text } of textObjects(message.blocks)) {
    // Slack parses mentions and links only in mrkdwn; plain_text shows `<!channel>` as typed and notifies nobody.
    if (type === 'mrkdwn') expectInert(text);
    else expectWhole(text);
  }
}

/** Every text object (`{ type: 'mrkdwn' | 'plain_text', text }`) in a block tree. */
function textObjects(value: unknown): { type: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap(textObjects);
  if (!value || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  const own = (o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string';
  const found = own ? [{ type: o.type as string, text: o.text as string }] : [];
  // Rich text elements and plan / task titles are plain text to Slack: shown as typed, never parsed.
  if (o.type === 'text' && typeof o.text === 'string') found.push({ type: 'plain_text', text: o.text });
  if ((o.type === 'plan' || o.type === 'task_card') && typeof o.title === 'string')
    found.push({ type: 'plain_text', text: o.title });
  return [...found, ...Object.values(o).flatMap(textObjects)];
}

/** No emoji cut in half. */
function expectWhole(text: string): void {
  expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
}

/** No `<…>` but Steward's own mention of Ada, no bare `&`, and no emoji cut in half. */
function expectInert(text: string): void {
  const rest = text.replace(/<@U0ADA>/g, '');
  expect(rest).not.toMatch(/[<>]/);
  expect(rest).not.toMatch(/&(?!amp;|lt;|gt;)/);
  expectWhole(rest);
}

/** Lone surrogates in the input are the input's own; only check that renderers add none of their own. */
const wellFormed = hostile.map((t) =>
  t.replace(/[\uD800-\uDFFF]/g, (c, i: number, s: string) => {
    const code = c.charCodeAt(0);
    const pairedHigh = code <= 0xdbff && /[\uDC00-\uDFFF]/.test(s[i + 1] ?? '');
    const pairedLow = code >= 0xdc00 && /[\uD800-\uDBFF]/.test(s[i - 1] ?? '');
    return pairedHigh || pairedLow ? c : '?';
  }),
);

describe('every Slack message, for hostile text', () => {
  it('plan cards (at review, running with progress, held mid-run) stay within limits and inert', () => {
    fc.assert(
      fc.property(
        fc.record({
          summary: wellFormed,
          id: wellFormed,
          target: wellFormed,
          args: wellFormed,
          description: wellFormed,
          risk: wellFormed,
          note: wellFormed,
          detail: wellFormed,
        }),
        fc.integer({ min: 1, max: 70 }),
        ({ summary, id, target, args, description, risk, note, detail }, n) => {
          const steps = Array.from({ length: n }, (_, i) =>
            createStep(i + 1, { id: `${id}${i}`, target, argsPreview: args, description, dependsOn: [id] }),
          );
          const card = createPlanCard({ summary, steps, layers: [[id]], risks: [risk], warnings: [risk], note });
          let live = createLiveCard(card, NOW);
          expectSafe(renderCard(live, NOW));
          expectSafe(renderCard(live, NOW, { planBlocks: true }));
          live = createLiveCard({ ...card, needsReview: false, actions: ['pause', 'stop'] }, NOW);
          live = withProgress(live, createProgress({ stepId: `${id}0`, status: 'failed', detail }), NOW);
          // A call in flight, with its server's progress message (issue 29).
          const reported = callProgressDetail(target, { progress: 1, total: 3, message: detail });
          const runningStep = `${id}${Math.min(1, n - 1)}`;
          live = withProgress(live, createProgress({ stepId: runningStep, status: 'running', detail: reported }), NOW);
          expectSafe(renderCard(live, NOW));
          expectSafe(renderCard(live, NOW, { planBlocks: true }));
          const held = createPlanCard({ ...card, revision: 1, actions: ['approve', 'stop'] });
          expectSafe(renderCard(withNewRevision(live, held, NOW), NOW));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('reports, answers, notices, breakpoints and the amendment modal stay within limits and inert', () => {
    fc.assert(
      fc.property(wellFormed, wellFormed, (text, other) => {
        for (const status of ['completed', 'failed'] as const)
          expectSafe(renderReport({ kind: 'report', runId: 'run-1', status, text }));
        expectSafe(renderAnswer({ kind: 'answer', text }));
        expectSafe(renderNotice({ kind: 'notice', level: 'warning', text }));
        const parts = [text, { person: ADA }, other, { person: { id: other, channel: 'slack' } }];
        expectSafe(renderNotice({ kind: 'notice', level: 'info', text, parts }));
        for (const before of [true, false])
          expectSafe(
            renderBreakpoint({
              kind: 'breakpoint',
              runId: 'r',
              revision: 1,
              stepId: other,
              before,
              output: text,
              actions: ['resume', 'stop'],
            }),
          );
        const modal = renderAmendModal({ runId: 'r', revision: 2 }, text);
        expect(viewProblems(modal)).toEqual([]);
        for (const t of allTexts(modal.blocks)) expectInert(t);
      }),
      { numRuns: 80 },
    );
  });
});

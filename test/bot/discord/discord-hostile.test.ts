/**
 * Whatever text a model, a tool or a person supplies, every Discord message and modal Steward renders passes
 * Discord's limits and shows no live mention: the only one left is the requester Steward names itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLiveCard, withNewRevision, withProgress } from '../../../src/bot/live-card-state.ts';
import { renderCard, type DiscordMessage } from '../../../src/bot/discord/discord-render.ts';
import {
  renderAnswer,
  renderBreakpoint,
  renderNotice,
  renderReport,
} from '../../../src/bot/discord/discord-thread-render.ts';
import { renderAmendModal, renderEditModal } from '../../../src/bot/discord/discord-modals.ts';
import { renderHelp, renderRunList } from '../../../src/bot/discord/discord-command-text.ts';
import { messageProblems, modalProblems } from '../../fakes/discord-limits.ts';
import { callProgressDetail } from '../../../src/engine/run/call-progress.ts';
import { createPlanCard, createProgress, createStep } from '../slack/fixtures.ts';
import { LIVE_MENTION } from './discord-inert.ts';

const NOW = 1_700_000_000_000;
const RUN = '6f1c1a52-93a4-4e5e-9b53-0d6f0e0c0a01';
const ADA = { id: '123456789012345678', name: 'Ada', channel: 'discord' };

/** Text built from what breaks naive escaping and cutting: mentions, links, fences, markdown, emoji, huge runs. */
const hostile = fc
  .array(
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom(
          '@everyone',
          '@here',
          '<@123>',
          '<@!1>',
          '<@&42>',
          '<#99>',
          '</ask:1>',
          '[a](https://x.test)',
        ),
      },
      { weight: 6, arbitrary: fc.constantFrom('`', '```', '*', '_', '~', '|', '\\', '# ', '> ', '😀', '\n', ' ', 'a') },
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 1, arbitrary: fc.constantFrom('@everyone'.repeat(3_000), '😀'.repeat(9_000), 'x'.repeat(1_000_000)) },
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

/** Every string a person sees in a message (custom ids and option values are never shown). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => (k === 'custom_id' || k === 'value' ? [] : strings(v)));
  return [];
}

/** No mention Discord would render, but Ada's, which Steward adds (and `parse: []` keeps from pinging). */
function expectInert(value: unknown): void {
  for (const s of strings(value)) expect(s.replaceAll(`<@${ADA.id}>`, '')).not.toMatch(LIVE_MENTION);
}

function expectValid(message: DiscordMessage): void {
  expect(messageProblems(message)).toEqual([]);
  expect(message.allowed_mentions).toEqual({ parse: [] });
  expectInert(message);
}

describe('every Discord message, for hostile text', () => {
  it('plan cards (at review, running with progress, held mid-run; up to 70 steps) are valid and inert', () => {
    fc.assert(
      fc.property(
        fc.record({ summary: hostile, id: hostile, target: hostile, args: hostile, text: hostile, detail: hostile }),
        fc.integer({ min: 1, max: 70 }),
        ({ summary, id, target, args, text, detail }, n) => {
          const steps = Array.from({ length: n }, (_, i) =>
            createStep(i + 1, {
              id: `${id.slice(0, 30)}${i}`,
              target,
              argsPreview: args,
              description: text,
              dependsOn: [id],
            }),
          );
          const card = createPlanCard({
            summary,
            steps,
            layers: [[id]],
            risks: [text, text],
            warnings: [text],
            note: text,
            requester: ADA,
            breakpoints: [`${id.slice(0, 30)}0`],
          });
          let live = createLiveCard(card, NOW);
          expectValid(renderCard(live, NOW));
          live = createLiveCard({ ...card, needsReview: false, actions: ['pause', 'stop'] }, NOW);
          live = withProgress(live, createProgress({ stepId: `${id.slice(0, 30)}0`, status: 'failed', detail }), NOW);
          // A call in flight, with its server's progress message (issue 29).
          const reported = callProgressDetail(target, { progress: 1, total: 3, message: detail });
          const runningStep = `${id.slice(0, 30)}${Math.min(1, n - 1)}`;
          live = withProgress(live, createProgress({ stepId: runningStep, status: 'running', detail: reported }), NOW);
          expectValid(renderCard(live, NOW + 5_000));
          const held = createPlanCard({ ...card, revision: 1, actions: ['approve', 'amend', 'stop'] });
          expectValid(renderCard(withNewRevision(live, held, NOW), NOW));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('reports, answers, notices, breakpoints, run lists and modals are valid and inert', () => {
    fc.assert(
      fc.property(hostile, hostile, (text, other) => {
        for (const m of renderReport({ kind: 'report', runId: RUN, status: 'completed', text })) expectValid(m);
        for (const m of renderAnswer({ kind: 'answer', text })) expectValid(m);
        expectValid(renderNotice({ kind: 'notice', level: 'warning', text }));
        expectValid(renderNotice({ kind: 'notice', level: 'info', text, parts: [{ person: ADA }, text, other] }));
        expectValid(
          renderBreakpoint({
            kind: 'breakpoint',
            runId: RUN,
            revision: 2,
            stepId: other.slice(0, 40),
            before: false,
            output: text,
            actions: ['resume', 'stop'],
          }),
        );
        expectValid(renderHelp(text));
        const listing = {
          id: RUN,
          status: 'running' as const,
          statusText: other,
          revision: 0,
          request: text,
          summary: null,
          conversation: { channel: 'discord', key: 'x' },
          createdAt: new Date(NOW),
        };
        expectValid(
          renderRunList(
            Array.from({ length: 30 }, () => listing),
            other,
            text,
          ),
        );
        const amend = renderAmendModal({ runId: RUN, revision: 3 }, text);
        expect(modalProblems(amend)).toEqual([]);
        const edit = renderEditModal(
          { runId: RUN, revision: 3 },
          {
            revision: 3,
            status: 'running',
            plan: { steps: [{ id: 's1', args: { text } }] },
            breakpoints: [],
            started: [],
          },
        );
        if ('modal' in edit) expect(modalProblems(edit.modal)).toEqual([]);
        else expect(edit.refusal).toMatch(/Amend/);
      }),
      { numRuns: 40 },
    );
  });

  it('a 1 MB report gives at most three valid messages, the last saying how much was cut', () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i}: @everyone <@1> **bold** ${'x'.repeat(30)}`).join(
      '\n',
    );
    const messages = renderReport({ kind: 'report', runId: RUN, status: 'failed', text });
    expect(messages).toHaveLength(3);
    for (const m of messages) expectValid(m);
    expect(messages[0]?.content).toMatch(/^\*\*❌ Report \(failed\)\*\*\n/);
    // The model's formatting is kept; only mentions are made inert.
    expect(messages[0]?.content).toContain('**bold**');
    expect(messages[2]?.content).toMatch(/… \(cut: [\d,]+ more characters\) The full report is stored with run /);
  });
});

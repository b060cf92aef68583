import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunListing, WorkflowOverview } from '../../../src/engine/channel.ts';
import { HOME_REVIEW_ACTION } from '../../../src/bot/slack/slack-actions.ts';
import { HOME_BLOCKS_MAX, renderHome } from '../../../src/bot/slack/slack-home.ts';
import { homeViewProblems } from './block-kit-limits.ts';
import { allTexts } from './fixtures.ts';

const AT = new Date('2026-12-03T13:40:00Z');

function createListing(n: number, overrides: Partial<RunListing> = {}): RunListing {
  return {
    id: `run-${n}`,
    status: 'completed',
    statusText: 'completed',
    revision: 0,
    request: `say hello ${n}`,
    summary: `Say hello ${n}`,
    conversation: { channel: 'slack', key: `C0GENERAL:1700000000.00000${n}` },
    createdAt: AT,
    ...overrides,
  };
}

function createOverview(overrides: Partial<WorkflowOverview> = {}): WorkflowOverview {
  return {
    name: 'digest',
    version: 2,
    review: 'saved',
    schedules: [{ cron: '0 9 * * MON', timeZone: 'Europe/Berlin', paused: false, nextFireAt: AT }],
    ...overrides,
  };
}

/** Every mrkdwn text in the view (what Slack parses for mentions and links). */
function mrkdwnTexts(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(mrkdwnTexts);
  if (!value || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  const own = o.type === 'mrkdwn' && typeof o.text === 'string' ? [o.text] : [];
  return [...own, ...Object.values(o).flatMap(mrkdwnTexts)];
}

/** The review menu of a view. */
function reviewMenu(view: ReturnType<typeof renderHome>) {
  const section = view.blocks.find((b) => b.type === 'section' && b.accessory?.type === 'static_select');
  if (section?.type !== 'section' || section.accessory?.type !== 'static_select') throw new Error('no menu');
  return section.accessory;
}

describe('renderHome', () => {
  it('lists runs with status, time and a link to each run on the dashboard, within Home limits', () => {
    const view = renderHome(
      [createListing(1), createListing(2, { status: 'running', statusText: 'running' })],
      'risky',
      null,
      { dashboardUrl: 'https://steward.example.com/' },
    );
    expect(view.type).toBe('home');
    expect(homeViewProblems(view)).toEqual([]);
    const texts = allTexts(view.blocks).join('\n');
    expect(texts).toContain('say hello 1');
    expect(texts).toContain(
      '✅ *completed* · 2026-12-03 13:40 UTC · <https://steward.example.com/runs/run-1|Open on the dashboard>',
    );
    expect(texts).toContain('▶️ *running*');
    expect(texts).toContain('<https://steward.example.com/runs/run-2|');
    // Without workflows set up, there is no workflow section.
    expect(texts).not.toContain('workflows');
  });

  it('without a dashboard, links each run to its thread when known, and names it by id', () => {
    const links = new Map([['run-1', 'https://test.slack.com/archives/C0GENERAL/p1700000000000001']]);
    const texts = allTexts(
      renderHome([createListing(1), createListing(2)], 'risky', null, { threadLinks: links }).blocks,
    );
    expect(texts.find((t) => t.includes('completed') && t.includes('run-1'))).toContain(
      '<https://test.slack.com/archives/C0GENERAL/p1700000000000001|Open the thread> · run `run-1`',
    );
    const second = texts.find((t) => t.includes('run-2'));
    expect(second).toContain('run `run-2`');
    expect(second).not.toContain('<http');
  });

  it('shows the current review preference as the chosen option of a menu offering all three', () => {
    for (const preference of ['all', 'risky', 'none'] as const) {
      const menu = reviewMenu(renderHome([], preference, null));
      expect(menu.action_id).toBe(HOME_REVIEW_ACTION);
      expect(menu.options?.map((o) => o.value)).toEqual(['all', 'risky', 'none']);
      expect(menu.initial_option?.value).toBe(preference);
    }
  });

  it('says so when there are no runs or no workflows yet', () => {
    const texts = allTexts(renderHome([], 'risky', []).blocks).join('\n');
    expect(texts).toContain('You have no runs yet');
    expect(texts).toContain('No workflows yet');
  });

  it("lists the person's workflows with their schedules, paused ones said so", () => {
    const view = renderHome([], 'risky', [
      createOverview(),
      createOverview({
        name: 'weekly',
        version: 1,
        review: 'every_fire',
        schedules: [{ cron: '0 8 * * *', timeZone: 'UTC', paused: true, nextFireAt: null }],
      }),
      createOverview({ name: 'adhoc', schedules: [] }),
    ]);
    expect(homeViewProblems(view)).toEqual([]);
    const texts = allTexts(view.blocks).join('\n');
    expect(texts).toContain(
      '*digest* · version 2 · fires run on the approval given at save\n• `0 9 * * MON` in Europe/Berlin, next 2026-12-03 13:40 UTC',
    );
    expect(texts).toContain('*weekly* · version 1 · every fire waits for approval\n• `0 8 * * *` in UTC, paused');
    expect(texts).toContain('*adhoc* · version 2 · fires run on the approval given at save\n• no schedule');
  });

  it('hostile request text, statuses, names and schedules cannot ping, link or format, and huge lists stay within limits', () => {
    const hostile = fc.constantFrom(
      '<!channel> *bold* <https://evil.test|click>',
      '<@U0EVE> & <!here>',
      '`'.repeat(50),
      '<'.repeat(5_000),
      '😀'.repeat(3_000),
    );
    fc.assert(
      fc.property(
        fc.array(hostile, { minLength: 0, maxLength: 60 }),
        fc.array(hostile, { minLength: 0, maxLength: 60 }),
        (requests, names) => {
          const runs = requests.map((r, i) => createListing(i, { request: r, summary: r, id: r, statusText: r }));
          const workflows = names.map((n) =>
            createOverview({
              name: n,
              schedules: Array.from({ length: 8 }, () => ({ cron: n, timeZone: n, paused: false, nextFireAt: AT })),
            }),
          );
          const view = renderHome(runs, 'all', workflows);
          expect(homeViewProblems(view)).toEqual([]);
          expect(view.blocks.length).toBeLessThanOrEqual(HOME_BLOCKS_MAX);
          for (const text of mrkdwnTexts(view.blocks)) {
            // Slack's `<…>` makes mentions and links: none may come from what someone typed.
            expect(text).not.toMatch(/[<>]/);
            expect(text).not.toMatch(/&(?!amp;|lt;|gt;)/);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a request is shown as plain text, whole words as typed, never as mrkdwn', () => {
    const request = '<!channel> *bold* <https://evil.test|click>';
    const view = renderHome([createListing(1, { request })], 'risky', null);
    const shown = view.blocks.find((b) => b.type === 'section' && b.text?.text.includes('bold'));
    expect(shown).toMatchObject({ type: 'section', text: { type: 'plain_text', text: request } });
  });

  it('a dashboard URL with characters Slack reads in links cannot end the link early', () => {
    const view = renderHome([createListing(1, { id: 'a|b>c' })], 'risky', null, {
      dashboardUrl: 'https://x.test/s?a=1&b=<2>|',
    });
    const line = mrkdwnTexts(view.blocks).find((t) => t.includes('Open on the dashboard'));
    expect(line).toContain('<https://x.test/s?a=1&amp;b=%3C2%3E%7C/runs/a%7Cb%3Ec|Open on the dashboard>');
  });
});

/** Thread replies on Discord: notices by level naming people, breakpoint holds with their buttons, answers split. */
import { describe, expect, it } from 'vitest';
import { parseCustomId } from '../../../src/bot/discord/discord-actions.ts';
import { renderAnswer, renderBreakpoint, renderNotice } from '../../../src/bot/discord/discord-thread-render.ts';
import { messageProblems } from '../../fakes/discord-limits.ts';

const RUN = '6f1c1a52-93a4-4e5e-9b53-0d6f0e0c0a01';
const ADA = { id: '123456789012345678', name: 'Ada', channel: 'discord' };

describe('thread replies', () => {
  it('a notice shows its level and names Discord people as mentions, others by name', () => {
    const notice = renderNotice({
      kind: 'notice',
      level: 'warning',
      text: 'Ada paused the run',
      parts: [{ person: ADA }, ' paused the run for ', { person: { id: 'U1', name: 'Bob', channel: 'slack' } }],
    });
    expect(notice.content).toBe('⚠️ <@123456789012345678> paused the run for Bob');
    expect(notice.allowed_mentions).toEqual({ parse: [] });
  });

  it('a notice too long for content (a long history) goes in an embed, cut there', () => {
    const notice = renderNotice({ kind: 'notice', level: 'info', text: 'revision 1: approved by Ada\n'.repeat(500) });
    expect(notice.content).toBeUndefined();
    expect(notice.embeds[0]?.description?.startsWith('ℹ️ revision 1')).toBe(true);
    expect(notice.embeds[0]?.description).toMatch(/… \(cut: [\d,]+ more characters\)$/);
    expect(messageProblems(notice)).toEqual([]);
  });

  it('a breakpoint hold shows the output in a code block and the buttons that go on or stop', () => {
    const hit = renderBreakpoint({
      kind: 'breakpoint',
      runId: RUN,
      revision: 3,
      stepId: 'fetch',
      before: true,
      output: '{"body": "```"}',
      actions: ['resume', 'amend', 'stop'],
    });
    expect(messageProblems(hit)).toEqual([]);
    expect(hit.content).toBe('⏸️ Holding before step `fetch`. It will send:\n```\n{"body": "`\u200b`\u200b`"}\n```');
    const buttons = hit.components.flatMap((r) => r.components) as { label: string; custom_id: string }[];
    expect(buttons.map((b) => [b.label, parseCustomId(b.custom_id)])).toEqual([
      ['Resume', { kind: 'resume', runId: RUN, revision: 3 }],
      ['Amend', { kind: 'amend', runId: RUN, revision: 3 }],
      ['Stop', { kind: 'stop', runId: RUN, revision: 3 }],
    ]);
  });

  it('an answer keeps its markdown and becomes at most three messages', () => {
    expect(renderAnswer({ kind: 'answer', text: '**Yes**, see `x` @here' })[0]?.content).toBe(
      '**Yes**, see `x` @\u200bhere',
    );
    const long = renderAnswer({ kind: 'answer', text: 'word '.repeat(5_000) });
    expect(long).toHaveLength(3);
    for (const m of long) expect(messageProblems(m)).toEqual([]);
  });
});

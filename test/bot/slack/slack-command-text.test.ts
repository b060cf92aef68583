import { describe, expect, it } from 'vitest';
import {
  dashboardText,
  parseCommand,
  runListText,
  workflowAnswerText,
} from '../../../src/bot/slack/slack-command-text.ts';
import type { RunListing } from '../../../src/engine/channel.ts';

const BOT = 'UBOT0001';

describe('/steward sub-commands', () => {
  it('parses each sub-command; anything unknown or incomplete is help with a note saying why', () => {
    expect(parseCommand('', BOT)).toEqual({ kind: 'help' });
    expect(parseCommand('  HELP ', BOT)).toEqual({ kind: 'help' });
    expect(parseCommand('status', BOT)).toEqual({ kind: 'status' });
    expect(parseCommand('runs', BOT)).toEqual({ kind: 'runs' });
    expect(parseCommand('review Risky', BOT)).toEqual({ kind: 'review', preference: 'risky' });
    expect(parseCommand('review', BOT)).toEqual({
      kind: 'help',
      note: '`/steward review` takes one of `all`, `risky` or `none`.',
    });
    expect(parseCommand('review all please', BOT)).toMatchObject({ kind: 'help' });
    expect(parseCommand('suggestions off', BOT)).toEqual({ kind: 'suggestions', on: false });
    expect(parseCommand(' Suggestions  ON ', BOT)).toEqual({ kind: 'suggestions', on: true });
    for (const bad of ['suggestions', 'suggestions maybe', 'suggestions off now'])
      expect(parseCommand(bad, BOT)).toEqual({ kind: 'help', note: '`/steward suggestions` takes `on` or `off`.' });
    expect(parseCommand('ask  compare a &lt; b\nthen tell me', BOT)).toEqual({
      kind: 'ask',
      request: 'compare a < b\nthen tell me',
    });
    expect(parseCommand('ask', BOT)).toMatchObject({ kind: 'help', note: 'Say what to do after `ask`.' });
    expect(parseCommand('<!channel>', BOT)).toMatchObject({ kind: 'help', note: 'I do not know `&lt;!channel&gt;`.' });
    expect(parseCommand('connections', BOT)).toEqual({ kind: 'connections', command: { kind: 'list' } });
    expect(parseCommand(' Connections  connect tracker', BOT)).toEqual({
      kind: 'connections',
      command: { kind: 'connect', server: 'tracker' },
    });
    expect(parseCommand('connections disconnect', BOT)).toEqual({
      kind: 'help',
      note: 'Use `/steward connections` (your connections), `/steward connections connect <server>` or `/steward connections disconnect <server>` (and `use` or `notme` to answer about a connection that waits for you).',
    });
  });

  it('`/steward dashboard` answers with a private sign-in link, or says the dashboard is off', () => {
    expect(parseCommand('dashboard', undefined)).toEqual({ kind: 'dashboard' });
    expect(dashboardText('https://steward.example.com/signin/abc_-1')).toBe(
      '<https://steward.example.com/signin/abc_-1|Open the dashboard>: this sign-in link is only for you, works once, and expires in 15 minutes.',
    );
    expect(dashboardText(null)).toContain('not turned on');
  });

  it("a workflow command is the words as typed, Slack's escapes undone; its answer is escaped again", () => {
    expect(parseCommand('save digest', BOT)).toEqual({ kind: 'workflow', text: 'save digest' });
    expect(parseCommand(' Schedule digest "0 9 * * MON"  Europe/Berlin', BOT)).toEqual({
      kind: 'workflow',
      text: 'Schedule digest "0 9 * * MON" Europe/Berlin',
    });
    expect(parseCommand('workflow digest edit {"steps": [{"a": "&lt;b&gt; &amp;"}]}', BOT)).toEqual({
      kind: 'workflow',
      text: 'workflow digest edit {"steps": [{"a": "<b> &"}]}',
    });
    for (const text of ['workflows', 'fork a b', 'workflow x run'])
      expect(parseCommand(text, BOT).kind).toBe('workflow');
    expect(parseCommand('saved', BOT)).toMatchObject({ kind: 'help' });
    expect(workflowAnswerText('No workflow <!channel> & <@U0EVE>.')).toBe(
      'No workflow &lt;!channel&gt; &amp; &lt;@U0EVE&gt;.',
    );
    expect(workflowAnswerText('x'.repeat(10_000)).length).toBeLessThanOrEqual(3_900);
  });

  it('an Assistant command is the words as typed after `/steward`; `ask ops: …` stays a request', () => {
    expect(parseCommand('assistants', BOT)).toEqual({ kind: 'assistant', text: 'assistants' });
    expect(parseCommand('assistant ops grant fs.read allow', BOT)).toEqual({
      kind: 'assistant',
      text: 'assistant ops grant fs.read allow',
    });
    expect(parseCommand('ask ops: restart nginx', BOT)).toEqual({ kind: 'ask', request: 'ops: restart nginx' });
  });

  it('lists runs a line each, links where known, escapes what people typed, and counts what does not fit', () => {
    const run = (n: number, over: Partial<RunListing> = {}): RunListing => ({
      id: `r${n}`,
      status: 'running',
      statusText: 'running',
      revision: 0,
      request: `job ${n} <@U0EVE>`,
      summary: null,
      conversation: { channel: 'slack', key: `C0GENERAL:1700000000.00000${n}` },
      createdAt: new Date('2026-12-01T15:20:30Z'),
      ...over,
    });
    const text = runListText(
      'Yours',
      [run(1), run(2, { conversation: { channel: 'slack', key: 'D0ADA:1.2' } })],
      new Map([['r1', 'https://x/p1']]),
      'none',
    );
    expect(text.split('\n')).toEqual([
      '*Yours*',
      '• ▶️ *running* · <https://x/p1|job 1 &lt;@U0EVE&gt;> · 2026-12-01 15:20 UTC',
      '• ▶️ *running* · job 2 &lt;@U0EVE&gt; (in a direct message) · 2026-12-01 15:20 UTC',
    ]);
    expect(runListText('Yours', [], new Map(), 'nothing yet')).toBe('nothing yet');
    const many = runListText(
      'Yours',
      Array.from({ length: 23 }, (_, i) => run(i)),
      new Map(),
      'none',
    );
    expect(many.split('\n')).toHaveLength(22);
    expect(many).toMatch(/…and 3 more\.$/);
  });
});

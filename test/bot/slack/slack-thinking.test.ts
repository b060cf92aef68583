/** The working sign against the fake Slack Web API, through the real WebClient. */
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ThinkingSigns } from '../../../src/bot/slack/slack-thinking.ts';
import { startFakeSlack, type FakeSlack } from '../../fakes/fake-slack-server.ts';
import { waitUntil } from '../../helpers/wait.ts';

let slack: FakeSlack;
let client: WebClient;
const logs: string[] = [];
beforeEach(async () => {
  slack = await startFakeSlack();
  client = new WebClient(slack.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  logs.length = 0;
});
afterEach(() => slack.close());

const statusesOf = (thread: string) =>
  slack
    .callsOf('assistant.threads.setStatus')
    .filter((c) => c.args.thread_ts === thread)
    .map((c) => c.args.status);

describe('the working sign', () => {
  it('is set again before Slack would drop it, for as long as it is up, and stops with the clear', async () => {
    const signs = new ThinkingSigns(client, (m) => logs.push(m), 40);
    signs.show('C1', '1.1', '1.1');
    await waitUntil('two refreshes', () => statusesOf('1.1').length >= 3);
    await signs.clear('C1', '1.1');
    expect(slack.statuses.has('C1:1.1')).toBe(false);
    const afterClear = statusesOf('1.1').length;
    expect(statusesOf('1.1').at(-1)).toBe('');
    // While another thread is refreshed twice, the cleared one is left alone.
    signs.show('C1', '2.2', '2.2');
    await waitUntil('two refreshes elsewhere', () => statusesOf('2.2').length >= 3);
    expect(statusesOf('1.1')).toHaveLength(afterClear);
    await signs.clear('C1', '2.2');
  });

  it('a clear right after the show still ends cleared (the clear waits for the set)', async () => {
    const signs = new ThinkingSigns(client, (m) => logs.push(m));
    signs.show('C1', '3.3', '3.3');
    await signs.clear('C1', '3.3');
    expect(statusesOf('3.3')).toEqual(['is looking into it…', '']);
    expect(slack.statuses.size).toBe(0);
  });

  it('a relabel changes the words, the refresh keeps the new ones, and a relabel after the clear sets nothing', async () => {
    const signs = new ThinkingSigns(client, (m) => logs.push(m), 40);
    signs.show('C1', '4.4', '4.4');
    await signs.relabel('C1', '4.4', 'is planning…');
    await waitUntil('a refresh after the relabel', () => statusesOf('4.4').length >= 3);
    await signs.clear('C1', '4.4');
    await signs.relabel('C1', '4.4', 'is planning…');
    const said = statusesOf('4.4');
    expect(said[0]).toBe('is looking into it…');
    expect(said.slice(1, -1).every((s) => s === 'is planning…')).toBe(true);
    expect(said.at(-1)).toBe('');
  });

  it('falls back to a reaction when the status is refused, and only logs when both are refused', async () => {
    const signs = new ThinkingSigns(client, (m) => logs.push(m));
    slack.refuse = (method) => (method === 'assistant.threads.setStatus' ? 'not_allowed_token_type' : undefined);
    signs.show('C1', '4.4', '4.5');
    await waitUntil('the reaction', () => slack.reactions.get('C1:4.5')?.has('eyes'));
    await signs.clear('C1', '4.4');
    expect(slack.reactions.get('C1:4.5')?.size).toBe(0);

    slack.refuse = () => 'missing_scope';
    signs.show('C1', '5.5', '5.5');
    await signs.clear('C1', '5.5');
    expect(logs.at(-1)).toBe('slack: no working sign could be shown in C1:5.5: An API error occurred: missing_scope');
    // The status was refused for good: only the reaction was tried the second time.
    expect(slack.callsOf('assistant.threads.setStatus')).toHaveLength(1);
  });
});

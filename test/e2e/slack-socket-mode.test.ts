import { afterEach, describe, expect, it } from 'vitest';
import { SlackChannel } from '../../src/bot/slack/slack-channel.ts';
import { info, type InboundDecision, type InboundHandler, type InboundMessage } from '../../src/engine/channel.ts';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createBlockAction, createMention, eventEnvelope } from './slack-requests.ts';
import { startFakeSocketMode, type FakeSocketMode } from './slack-socket.ts';

let slack: FakeSlack | undefined;
let socket: FakeSocketMode | undefined;
let channel: SlackChannel | undefined;
afterEach(async () => {
  await channel?.stop();
  await socket?.close();
  await slack?.close();
  channel = socket = slack = undefined;
});

function recordingHandler() {
  const messages: InboundMessage[] = [];
  const decisions: InboundDecision[] = [];
  const handler: InboundHandler = {
    message: async (m) => void messages.push(m),
    decision: async (d) => void decisions.push(d),
    canDecide: async () => true,
    claimDelivery: async () => true,
    setReviewPreference: async () => undefined,
    setBreakpointSuggestions: async () => undefined,
    history: async () => undefined,
    activeRuns: async () => [],
    recentRuns: async () => [],
    reviewPreference: async () => 'risky',
    workflowsOf: async () => null,
    editablePlan: async () => null,
    checkEdit: async () => null,
    workflowCommand: async () => info(''),
    assistantCommand: async () => info(''),
    dashboardLink: async () => null,
    connections: async () => ({ kind: 'off' as const }),
    answerQuestion: async () => ({ ok: false as const, refusal: 'not here' }),
    openQuestion: async () => null,
  };
  return { handler, messages, decisions };
}

describe('slack Socket Mode start-up wiring', () => {
  it('with an app token it connects over a WebSocket (no HTTP port), acks envelopes and hands them to the engine', async () => {
    slack = await startFakeSlack();
    socket = await startFakeSocketMode();
    slack.socketUrl = socket.url;
    const logs: string[] = [];
    channel = new SlackChannel({
      botToken: slack.botToken,
      appToken: slack.appToken,
      apiUrl: slack.apiUrl,
      log: (l, m) => logs.push(`${l} ${m}`),
    });
    const { handler, messages, decisions } = recordingHandler();
    await channel.start(handler);
    await socket.connected;
    expect(channel.mode).toBe('socket');
    expect(channel.port).toBeUndefined();
    expect(slack.calls.map((c) => [c.method, c.token])).toEqual([
      ['auth.test', slack.botToken],
      ['apps.connections.open', slack.appToken],
    ]);

    socket.push({
      envelope_id: 'env-1',
      type: 'events_api',
      accepts_response_payload: false,
      retry_attempt: 0,
      retry_reason: '',
      payload: JSON.parse(
        eventEnvelope(
          createMention({ text: 'hello there', ts: '1700000000.000100' }, slack.botUserId),
          slack.botUserId,
        ),
      ),
    });
    await waitUntil(
      'the mention and its ack',
      () => messages.length === 1 && socket!.received.some((r) => r.envelope_id === 'env-1'),
      { timeoutMs: 10_000 },
    );
    expect(messages[0]).toMatchObject({
      conversation: { channel: 'slack', key: 'C0GENERAL:1700000000.000100' },
      text: 'hello there',
    });

    const action = createBlockAction({
      user: 'U0ADA',
      actionId: 'steward.pause',
      value: '{"runId":"r1","revision":2}',
      channel: 'C0GENERAL',
      messageTs: '1700000001.000200',
      threadTs: '1700000000.000100',
      triggerId: 't',
      botUserId: slack.botUserId,
    });
    socket.push({ envelope_id: 'env-2', type: 'interactive', accepts_response_payload: true, payload: action });
    await waitUntil(
      'the press and its ack',
      () => decisions.length === 1 && socket!.received.some((r) => r.envelope_id === 'env-2'),
      { timeoutMs: 10_000 },
    );
    expect(decisions[0]).toMatchObject({
      runId: 'r1',
      revision: 2,
      action: 'pause',
      actor: { id: 'U0ADA', channel: 'slack' },
    });
    expect(logs.filter((l) => l.startsWith('error'))).toEqual([]);
  });

  it("a rejected bot token stops start-up with Slack's error", async () => {
    slack = await startFakeSlack();
    channel = new SlackChannel({
      botToken: 'xoxb-wrong',
      appToken: slack.appToken,
      apiUrl: slack.apiUrl,
      log: () => undefined,
    });
    await expect(channel.start(recordingHandler().handler)).rejects.toThrow(/invalid_auth/);
  });
});

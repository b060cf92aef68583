import { describe, expect, it } from 'vitest';
import { ChannelSet } from '../../src/bot/channel-set.ts';
import type { ChannelAdapter, InboundHandler } from '../../src/engine/channel.ts';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import type { Conversation } from '../../src/engine/ports.ts';

/** A channel that records what it was sent, and can fail to start. */
function recorder(name: string, o: { failStart?: boolean } = {}) {
  const sent: Array<[Conversation, OutboundMessage]> = [];
  const events: string[] = [];
  const adapter: ChannelAdapter = {
    name,
    start: async () => {
      if (o.failStart) throw new Error(`${name} refused the token`);
      events.push('start');
    },
    stop: async () => void events.push('stop'),
    send: async (c, m) => void sent.push([c, m]),
  };
  return { adapter, sent, events };
}

const handler = {} as InboundHandler;
const answer: OutboundMessage = { kind: 'answer', text: 'hi' };

describe('a channel set (Slack and Discord in one process)', () => {
  it('sends each message to the platform whose conversation it is, and only there', async () => {
    const slack = recorder('slack');
    const discord = recorder('discord');
    const warnings: string[] = [];
    const set = new ChannelSet([slack.adapter, discord.adapter], (_, m) => warnings.push(m));
    await set.send({ channel: 'discord', key: '1:2' }, answer);
    await set.send({ channel: 'slack', key: 'C1:1.0' }, answer);
    expect(discord.sent.map(([c]) => c.key)).toEqual(['1:2']);
    expect(slack.sent.map(([c]) => c.key)).toEqual(['C1:1.0']);
    await set.send({ channel: 'teams', key: 'x' }, answer);
    expect(warnings).toEqual([expect.stringContaining("no channel serves conversations of 'teams'")]);
    expect(
      set.openReport(
        { channel: 'discord', key: '1:2' },
        { runId: 'r', status: 'completed', requester: { id: 'a', channel: 'discord' } },
      ),
    ).toBeNull();
  });

  it('a platform that fails to start stops the ones already started, and the failure is thrown', async () => {
    const slack = recorder('slack');
    const discord = recorder('discord', { failStart: true });
    const set = new ChannelSet([slack.adapter, discord.adapter], () => {});
    await expect(set.start(handler)).rejects.toThrow('discord refused the token');
    expect(slack.events).toEqual(['start', 'stop']);
  });
});

import { describe, expect, it } from 'vitest';
import { decodeCardRef, decisionFromActionId, encodeCardRef } from '../../../src/bot/slack/slack-actions.ts';
import {
  fromConversation,
  fromDirectMessage,
  fromMention,
  fromThreadReply,
  type SlackMessageEvent,
} from '../../../src/bot/slack/slack-inbound.ts';

const BOT = 'UBOT0001';
const event = (overrides: Partial<SlackMessageEvent> = {}): SlackMessageEvent => ({
  type: 'message',
  user: 'U0ADA',
  channel: 'C0GENERAL',
  ts: '1700000100.000200',
  text: 'hello',
  ...overrides,
});

describe('slack inbound translation', () => {
  it('a mention starts (or continues) the thread it is in; the bot mention is removed and escapes undone', () => {
    const top = fromMention(event({ type: 'app_mention', text: `<@${BOT}> compare a &lt; b &amp; c` }), BOT);
    expect(top).toEqual({
      conversation: { channel: 'slack', key: 'C0GENERAL:1700000100.000200' },
      actor: { id: 'U0ADA', channel: 'slack' },
      text: 'compare a < b & c',
      place: 'C0GENERAL',
    });
    const inThread = fromMention(
      event({ type: 'app_mention', text: `<@${BOT}> status?`, thread_ts: '1700000000.000100' }),
      BOT,
    );
    expect(inThread?.conversation.key).toBe('C0GENERAL:1700000000.000100');
    expect(fromMention(event({ type: 'app_mention', text: `<@${BOT}>` }), BOT)).toBeNull();
    expect(fromConversation({ channel: 'slack', key: 'C0GENERAL:1700000000.000100' })).toEqual({
      channel: 'C0GENERAL',
      threadTs: '1700000000.000100',
    });
    expect(fromConversation({ channel: 'console', key: 'console' })).toBeNull();
  });

  it('only plain replies inside a thread pass: not top-level chatter, edits, bots, Steward itself, or mentions', () => {
    const reply = event({ thread_ts: '1700000000.000100' });
    expect(fromThreadReply(reply, BOT)?.conversation.key).toBe('C0GENERAL:1700000000.000100');
    expect(fromThreadReply(event(), BOT)).toBeNull();
    expect(fromThreadReply({ ...reply, ts: reply.thread_ts }, BOT)).toBeNull();
    expect(fromThreadReply({ ...reply, subtype: 'message_changed' }, BOT)).toBeNull();
    expect(fromThreadReply({ ...reply, subtype: 'thread_broadcast' }, BOT)).not.toBeNull();
    expect(fromThreadReply({ ...reply, bot_id: 'B1' }, BOT)).toBeNull();
    expect(fromThreadReply({ ...reply, user: BOT }, BOT)).toBeNull();
    expect(fromThreadReply({ ...reply, text: `<@${BOT}> amend it` }, BOT)).toBeNull();
  });

  it('every DM is for Steward: top-level starts its own thread, thread replies keep theirs; bots and edits are not', () => {
    const dm = event({ channel: 'D0ADA', channel_type: 'im', text: `hi &lt;there&gt;` });
    expect(fromDirectMessage(dm, BOT)).toEqual({
      conversation: { channel: 'slack', key: 'D0ADA:1700000100.000200' },
      actor: { id: 'U0ADA', channel: 'slack' },
      text: 'hi <there>',
      place: 'D0ADA',
    });
    const inThread = { ...dm, thread_ts: '1700000000.000100' };
    expect(fromDirectMessage(inThread, BOT)?.conversation.key).toBe('D0ADA:1700000000.000100');
    expect(fromConversation({ channel: 'slack', key: 'D0ADA:1700000000.000100' })?.channel).toBe('D0ADA');
    // The channel-reply path leaves DMs alone, so a DM thread reply reaches the engine once.
    expect(fromThreadReply(inThread, BOT)).toBeNull();
    expect(fromDirectMessage({ ...dm, channel_type: 'channel' }, BOT)).toBeNull();
    expect(fromDirectMessage({ ...dm, bot_id: 'B1' }, BOT)).toBeNull();
    expect(fromDirectMessage({ ...dm, user: BOT }, BOT)).toBeNull();
    expect(fromDirectMessage({ ...dm, subtype: 'message_changed' }, BOT)).toBeNull();
    expect(fromDirectMessage({ ...dm, text: `<@${BOT}>` }, BOT)).toBeNull();
  });

  it('button values round-trip, and foreign values or action ids are ignored, never thrown on', () => {
    expect(decodeCardRef(encodeCardRef({ runId: 'r1', revision: 2 }))).toEqual({ runId: 'r1', revision: 2 });
    for (const bad of [undefined, '', 'nope', '{"runId":1}', '[]', 'null', '{"runId":"r","revision":1.5}'])
      expect(decodeCardRef(bad)).toBeNull();
    expect(decisionFromActionId('steward.approve')).toBe('approve');
    expect(decisionFromActionId('steward.ask-first')).toBeNull();
    expect(decisionFromActionId('other.approve')).toBeNull();
  });
});

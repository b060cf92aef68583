import { describe, expect, it } from 'vitest';
import {
  fromConversation,
  requestText,
  threadName,
  toActor,
  toConversation,
} from '../../../src/bot/discord/discord-inbound.ts';

const BOT = '111111111111111111';
const ROLE = '222222222222222222';

describe('discord inbound values', () => {
  it('a thread or a DM is a conversation, and only our own keys read back', () => {
    expect(fromConversation(toConversation('333333333333333333', '444444444444444444'))).toEqual({
      guildId: '333333333333333333',
      channelId: '444444444444444444',
    });
    expect(fromConversation(toConversation(null, '444444444444444444'))).toEqual({
      guildId: null,
      channelId: '444444444444444444',
    });
    expect(fromConversation({ channel: 'slack', key: 'dm:444444444444444444' })).toBeNull();
    for (const key of ['C123:1700000000.000100', 'dm:abc', 'x:444444444444444444', 'dm:444444444444444444:1', ''])
      expect(fromConversation({ channel: 'discord', key })).toBeNull();
  });

  it("the bot's own mentions, as a user or by its own role, are taken out of the request; others stay", () => {
    expect(requestText(`<@${BOT}> summarise   the <@999999999999999999> notes`, BOT)).toBe(
      'summarise the <@999999999999999999> notes',
    );
    expect(requestText(`<@!${BOT}>\tsay hi`, BOT)).toBe('say hi');
    expect(requestText(`<@&${ROLE}> say hi <@&555555555555555555>`, BOT, [ROLE])).toBe('say hi <@&555555555555555555>');
    expect(requestText(`<@${BOT}>`, BOT)).toBe('');
  });

  it('people are named as the server shows them and keep the roles of their action', () => {
    expect(toActor({ id: '1', username: 'ada', globalName: 'Ada L', nick: 'Countess', roles: ['7'] })).toEqual({
      id: '1',
      name: 'Countess',
      channel: 'discord',
      roles: ['7'],
    });
    expect(toActor({ id: '1', username: 'ada', globalName: null })).toEqual({
      id: '1',
      name: 'ada',
      channel: 'discord',
    });
  });

  it("a thread is named after the request's first line, within Discord's 100 characters", () => {
    expect(threadName('deploy the site\nand tell me')).toBe('deploy the site');
    expect(threadName('x'.repeat(300)).length).toBeLessThanOrEqual(100);
    expect(threadName('   ')).toBe('Steward');
  });
});

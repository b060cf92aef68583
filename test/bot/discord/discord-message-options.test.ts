/**
 * The renderer's messages reach Discord's API as rendered when a channel sends them through discord.js: embeds and
 * components unchanged, and `allowed_mentions: { parse: [] }` (discord.js reads `allowedMentions` from its options
 * and would silently send the client's default for an `allowed_mentions` key). Uses discord.js's own payload
 * builder, with no client or network.
 */
import { MessagePayload, type MessageCreateOptions, type MessagePayloadOption } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { createLiveCard } from '../../../src/bot/live-card-state.ts';
import { renderCard, toMessageOptions, type DiscordMessage } from '../../../src/bot/discord/discord-render.ts';
import { renderReport } from '../../../src/bot/discord/discord-thread-render.ts';
import { createPlanCard } from '../slack/fixtures.ts';

/** The body discord.js would send for these options, to a channel whose client allows every mention by default. */
function bodyFor(options: MessagePayloadOption): Record<string, unknown> {
  const target = {
    client: {
      options: { allowedMentions: { parse: ['users', 'roles', 'everyone'] }, jsonTransformer: (v: unknown) => v },
    },
  };
  return new MessagePayload(target as never, options).resolveBody().body as Record<string, unknown>;
}

describe('sending through discord.js', () => {
  it('a card arrives as rendered, with allowed_mentions parse []', () => {
    const message = renderCard(createLiveCard(createPlanCard(), 0), 0);
    const body = bodyFor(toMessageOptions(message) satisfies MessageCreateOptions);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.embeds).toEqual(message.embeds);
    expect(body.components).toEqual(message.components);
  });

  it('a report arrives with its content and parse []', () => {
    const [message] = renderReport({ kind: 'report', runId: 'r', status: 'completed', text: 'done @everyone' });
    const body = bodyFor(toMessageOptions(message as DiscordMessage));
    expect(body.content).toBe((message as DiscordMessage).content);
    expect(body.allowed_mentions).toEqual({ parse: [] });
  });

  it('(why) the API body passed to discord.js as it is would lose parse [] for the client default', () => {
    const [message] = renderReport({ kind: 'report', runId: 'r', status: 'completed', text: 'done' });
    expect(bodyFor(message as never).allowed_mentions).toEqual({ parse: ['users', 'roles', 'everyone'] });
  });
});

/**
 * The discord.js client Steward runs on: the intents it needs and why, mentions off by default for everything it
 * sends, the REST base for tests, and log-in failures turned into one clear sentence.
 */
import { Client, GatewayIntentBits, Partials, RESTJSONErrorCodes } from 'discord.js';
import { StewardError } from '../../engine/errors.ts';

/** How Steward connects to Discord. */
export interface DiscordSettings {
  token: string;
  /** The REST API's base, e.g. `http://127.0.0.1:4000/api` for a local fake; the gateway's address comes from it. */
  apiUrl?: string;
  /** Register `/steward` in this server only (seen at once), else globally. */
  guildId?: string;
  /** Ask for the privileged Message Content intent, so thread replies need not mention the bot. */
  messageContent: boolean;
}

/** How long log-in may take before start-up gives up with a clear message. */
const LOGIN_TIMEOUT_MS = 30_000;

/**
 * A client with the intents Steward uses: servers and their channels (`Guilds`), messages in them
 * (`GuildMessages`: mentions of the bot carry their text without the privileged intent) and direct messages;
 * `MessageContent` only when configured. Direct-message channels arrive uncached, hence the `Channel` partial.
 */
export function createDiscordClient(settings: DiscordSettings): Client {
  const intents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages];
  if (settings.messageContent) intents.push(GatewayIntentBits.MessageContent);
  return new Client({
    intents,
    partials: [Partials.Channel],
    // Nothing Steward sends may ping anyone: text comes from models, tools and people.
    allowedMentions: { parse: [] },
    rest: settings.apiUrl ? { api: settings.apiUrl } : {},
  });
}

/** Logs in and waits until the gateway says ready; a refused token or intent becomes a `config` error. */
export async function logIn(client: Client, token: string): Promise<void> {
  const ready = new Promise<void>((resolve) => client.once('clientReady', () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StewardError('config', 'Discord: no answer from the gateway within 30 s of logging in.')),
      LOGIN_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([client.login(token).then(() => ready), late]);
  } catch (err) {
    await client.destroy().catch(() => undefined);
    throw loginError(err);
  } finally {
    clearTimeout(timer);
  }
}

/** A log-in failure in words a person can act on (never the token). */
function loginError(err: unknown): Error {
  if (err instanceof StewardError) return err;
  const e = err as { code?: unknown; message?: string };
  const text = e.message ?? String(err);
  if (e.code === 'TokenInvalid' || e.code === RESTJSONErrorCodes.UnknownAccount || /401|Unauthorized/i.test(text))
    return new StewardError(
      'config',
      'Discord refused DISCORD_TOKEN (401). Copy the bot token again; see docs/discord.md.',
    );
  if (e.code === 'DisallowedIntents' || /disallowed intent/i.test(text))
    return new StewardError(
      'config',
      'Discord refused the Message Content intent: turn it on for the bot in the Developer Portal, or set DISCORD_MESSAGE_CONTENT=off (then a reply in a thread must mention the bot). See docs/discord.md.',
    );
  return new StewardError('config', `Discord: could not log in (${text}).`);
}

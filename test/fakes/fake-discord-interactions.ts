/**
 * The fake Discord's interaction endpoints, with Discord's rules: one callback per interaction (else 400, 40060),
 * sent within 3 s of the dispatch (else 404, 10062); the interaction's webhook (`@original`, follow-ups) answers
 * for 15 minutes (then 401, 50027). Deferred replies show as loading messages until edited; a component's
 * deferred update or update acts on the message the component is on.
 */
import { InteractionResponseType, InteractionType, MessageFlags, type APIMessage } from 'discord.js';
import {
  channelOf,
  checkMessage,
  editMessage,
  fail,
  isEmpty,
  ok,
  postMessage,
  refuseInvalid,
  unknownChannel,
  unknownMessage,
  type Answer,
  type Body,
  type Ctx,
  type RestState,
  type Route,
  type StoredInteraction,
  type StoredMessage,
} from './fake-discord-rest.ts';
import { autocompleteProblems, modalProblems } from './discord-limits.ts';

const INTERACTION_WINDOW_MS = 3_000;
const WEBHOOK_TOKEN_MS = 15 * 60_000;

/** Finds the interaction a webhook token belongs to, refusing an unknown or expired (15 min) token. */
function byToken(s: RestState, c: Ctx): StoredInteraction | Answer {
  const found = [...s.interactions.values()].find((i) => i.token === c.params.token);
  if (!found || c.params.app !== s.applicationId) return fail(404, 10015, 'Unknown Webhook');
  c.call.interactionId = found.id;
  if (s.now() - found.dispatchedAt > WEBHOOK_TOKEN_MS) return fail(401, 50027, 'Invalid Webhook Token');
  return found;
}

function webhookMessage(s: RestState, i: StoredInteraction, id: string | undefined): StoredMessage | undefined {
  const messageId = id === '@original' ? i.originalId : id;
  const stored = messageId ? s.messages.get(messageId) : undefined;
  if (!stored) return undefined;
  return stored.interactionId === i.id || messageId === i.originalId ? stored : undefined;
}

/** POST .../callback, and the interaction webhook's follow-ups and `@original`. */
export const interactionRoutes: Route[] = [
  { method: 'POST', route: '/interactions/:interaction/:token/callback', auth: false, run: callback },
  {
    method: 'POST',
    route: '/webhooks/:app/:token',
    auth: false,
    run: (s, c) => {
      const i = byToken(s, c);
      if ('status' in i) return i;
      const refused = checkMessage(c, c.body);
      if (refused) return refused;
      if (isEmpty(c.body)) return fail(400, 50006, 'Cannot send an empty message');
      const channel = channelOf(s, i.channelId);
      if (!channel) return unknownChannel();
      const message = postMessage(s, channel, c.body, { interactionId: i.id });
      return c.query.get('wait') === 'true' ? ok(message) : ok();
    },
  },
  {
    method: 'GET',
    route: '/webhooks/:app/:token/messages/:message',
    auth: false,
    run: (s, c) => {
      const i = byToken(s, c);
      if ('status' in i) return i;
      const stored = webhookMessage(s, i, c.params.message);
      return stored ? ok(stored.message) : unknownMessage();
    },
  },
  {
    method: 'PATCH',
    route: '/webhooks/:app/:token/messages/:message',
    auth: false,
    run: (s, c) => {
      const i = byToken(s, c);
      if ('status' in i) return i;
      const stored = webhookMessage(s, i, c.params.message);
      if (!stored) return unknownMessage();
      return checkMessage(c, c.body) ?? ok(editMessage(s, stored, c.body));
    },
  },
];

/** POST /interactions/:id/:token/callback: the one acknowledgement an interaction gets, within 3 s. */
function callback(s: RestState, c: Ctx): Answer {
  const i = s.interactions.get(c.params.interaction ?? '');
  if (!i || i.token !== c.params.token) return fail(404, 10062, 'Unknown interaction');
  c.call.interactionId = i.id;
  if (s.now() - i.dispatchedAt > INTERACTION_WINDOW_MS) return fail(404, 10062, 'Unknown interaction');
  if (i.callbackType !== undefined) return fail(400, 40060, 'Interaction has already been acknowledged.');
  const type = Number(c.body.type);
  const data = (c.body.data ?? {}) as Body;
  const channel = channelOf(s, i.channelId);
  const onComponent = i.type === InteractionType.MessageComponent || i.componentMessageId !== undefined;
  let message: APIMessage | undefined;
  // An autocomplete interaction takes only its choices (type 8), and only it takes them.
  const autocomplete = i.type === InteractionType.ApplicationCommandAutocomplete;
  if (autocomplete !== (type === InteractionResponseType.ApplicationCommandAutocompleteResult))
    return fail(400, 50035, 'Invalid Form Body', { type: `callback type ${type} for interaction type ${i.type}` });
  switch (type) {
    case InteractionResponseType.ApplicationCommandAutocompleteResult: {
      const refused = refuseInvalid(c, autocompleteProblems(data));
      if (refused) return refused;
      i.choices = data.choices as { name: string; value: string }[];
      break;
    }
    case InteractionResponseType.ChannelMessageWithSource: {
      const refused = checkMessage(c, data);
      if (refused) return refused;
      if (!channel) return unknownChannel();
      message = postMessage(s, channel, data, { interactionId: i.id });
      break;
    }
    case InteractionResponseType.DeferredChannelMessageWithSource: {
      if (!channel) return unknownChannel();
      const flags = MessageFlags.Loading | (Number(data.flags ?? 0) & MessageFlags.Ephemeral);
      message = postMessage(s, channel, { content: '', flags }, { interactionId: i.id });
      break;
    }
    case InteractionResponseType.DeferredMessageUpdate:
    case InteractionResponseType.UpdateMessage: {
      const stored = i.componentMessageId ? s.messages.get(i.componentMessageId) : undefined;
      if (!onComponent || !stored)
        return fail(400, 50035, 'Invalid Form Body', { type: 'not a component interaction' });
      if (type === InteractionResponseType.UpdateMessage) {
        const refused = checkMessage(c, data);
        if (refused) return refused;
        editMessage(s, stored, data);
      }
      message = stored.message;
      break;
    }
    case InteractionResponseType.Modal: {
      const refused = refuseInvalid(c, modalProblems(data));
      if (refused) return refused;
      if (i.type === InteractionType.ModalSubmit)
        return fail(400, 50035, 'Invalid Form Body', { type: 'modal to modal' });
      i.modal = data;
      break;
    }
    default:
      return fail(400, 50035, 'Invalid Form Body', { type: `unsupported callback type ${type}` });
  }
  i.callbackType = type;
  i.originalId = message?.id;
  if (c.query.get('with_response') !== 'true') return ok();
  return ok({
    interaction: {
      id: i.id,
      type: i.type,
      response_message_id: message?.id,
      response_message_loading: type === InteractionResponseType.DeferredChannelMessageWithSource,
      response_message_ephemeral: Boolean((message?.flags ?? 0) & MessageFlags.Ephemeral),
    },
    resource: { type, ...(message && type !== InteractionResponseType.DeferredMessageUpdate ? { message } : {}) },
  });
}

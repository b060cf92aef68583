/**
 * The fake Discord against the real discord.js 14 Client: what the Discord adapter will lean on (login, messages,
 * threads, buttons, slash commands, resume, 429s, Discord's limits and deadlines) works end to end, and the fake
 * refuses what Discord refuses, so the adapter's tests can trust it.
 */
import {
  ButtonStyle,
  Client,
  ComponentType,
  DiscordAPIError,
  GatewayIntentBits,
  MessageFlags,
  Partials,
  Routes,
  TextInputStyle,
  type APIModalInteractionResponseCallbackData,
  type AutocompleteInteraction,
  type ChatInputCommandInteraction,
  type Interaction,
  type Message,
  type TextChannel,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/wait.ts';
import { NONCE_WINDOW_MS } from './fake-discord-nonces.ts';
import { startFakeDiscord, type FakeDiscord } from './fake-discord-server.ts';

const INTENTS = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages];
const NO_PINGS = { parse: [] };
/** discord.js options for a message that pings nobody. */
const QUIET = { allowedMentions: NO_PINGS };

let fake: FakeDiscord;
let client: Client;
/** Moves the fake's clock (interaction windows, token ages) without waiting. */
let skewMs = 0;
const received: Message[] = [];
const interactions: Interaction[] = [];
/** Every gateway dispatch the client received, as `type:id`. */
const dispatches: string[] = [];

const messagesWithId = (id: string) => received.filter((m) => m.id === id);
const interactionWithId = (id: string) => waitUntil(`interaction ${id}`, () => interactions.find((i) => i.id === id));
/** The error code a Discord API refusal carries. */
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof DiscordAPIError ? e.code : String(e)),
  );

beforeAll(async () => {
  fake = await startFakeDiscord({ replayLastOnResume: true, now: () => Date.now() + skewMs });
  client = new Client({ intents: INTENTS, partials: [Partials.Channel], rest: { api: fake.apiUrl } });
  client.on('messageCreate', (m) => void received.push(m));
  client.on('interactionCreate', (i) => void interactions.push(i));
  client.on('raw', (p: { t?: string; d?: { id?: string } }) => void dispatches.push(`${p.t}:${p.d?.id}`));
  await client.login(fake.token);
  await waitUntil('the client to be ready', () => client.isReady());
});

afterAll(async () => {
  await client?.destroy();
  await fake?.close();
});

const textChannel = () => client.channels.cache.get(fake.channelId) as TextChannel;

describe('fake Discord with the real discord.js client', () => {
  it('logs in over the gateway as the fake bot and caches its guild and text channel', () => {
    expect(client.user?.id).toBe(fake.botUser.id);
    expect(client.user?.bot).toBe(true);
    expect(client.guilds.cache.get(fake.guildId)?.name).toBe('Test Guild');
    expect(textChannel().isTextBased()).toBe(true);
    expect(fake.identifies).toBe(1);
    expect(fake.intents).toBe(INTENTS.reduce((a, b) => a | b, 0));
    expect(fake.gatewayQueries[0]).toContain('v=10&encoding=json');
  });

  it('takes files as attachments and refuses what Discord refuses: 11 files, or over 10 MiB in one message', async () => {
    const file = (name: string, bytes: number) => ({ name, attachment: Buffer.alloc(bytes, 1) });
    const sent = await textChannel().send({ content: 'two files', files: [file('a.png', 10), file('b.bin', 20)] });
    expect(sent.attachments.map((a) => [a.name, a.size])).toEqual([
      ['a.png', 10],
      ['b.bin', 20],
    ]);
    const eleven = Array.from({ length: 11 }, (_, i) => file(`f${i}.png`, 1));
    await expect(textChannel().send({ files: eleven })).rejects.toMatchObject({ status: 400, code: 50035 });
    const big = [file('big-1.bin', 6 * 1024 * 1024), file('big-2.bin', 5 * 1024 * 1024)];
    await expect(textChannel().send({ files: big })).rejects.toMatchObject({ status: 413, code: 40005 });
  });

  it('delivers a mention as messageCreate, and the reply opens a thread from it and posts there', async () => {
    const mention = fake.messageCreate({ content: 'please tidy the wiki', mentionsBot: true });
    fake.dispatch('MESSAGE_CREATE', mention);
    const [message] = await waitUntil(
      'the mention',
      () => messagesWithId(mention.id).length && messagesWithId(mention.id),
    );
    expect(message?.mentions.users.has(fake.botUser.id)).toBe(true);
    expect(message?.content).toContain('please tidy the wiki');

    const thread = await message!.startThread({ name: 'Tidy the wiki' });
    await thread.send({ content: 'On it.', allowedMentions: NO_PINGS });

    expect(fake.threads.map((t) => [t.id, 'parent_id' in t && t.parent_id])).toEqual([[thread.id, fake.channelId]]);
    expect(fake.messagesIn(thread.id).map((m) => m.message.content)).toEqual(['On it.']);
    expect(fake.callsTo('POST', '/channels/:channel/messages').at(-1)?.allowedMentions).toEqual(NO_PINGS);
    // Discord echoes the bot's own message back over the gateway: the adapter has to ignore its own messages.
    await waitUntil('the echo of our own message', () => received.find((m) => m.content === 'On it.'));
  });

  it("blanks a guild message's content without the Message Content intent, unless it mentions the bot; DMs keep it", async () => {
    const plain = fake.messageCreate({ content: 'secret plans' });
    const dm = fake.messageCreate({ content: 'hello in private', dm: true });
    fake.dispatch('MESSAGE_CREATE', plain);
    fake.dispatch('MESSAGE_CREATE', dm);
    const [guildMessage] = await waitUntil(
      'the plain message',
      () => messagesWithId(plain.id).length && messagesWithId(plain.id),
    );
    const [direct] = await waitUntil('the DM', () => messagesWithId(dm.id).length && messagesWithId(dm.id));
    expect(guildMessage?.content).toBe('');
    expect(direct?.content).toBe('hello in private');
    expect(direct?.channel.isDMBased()).toBe(true);
    expect(fake.messages.get(plain.id)?.message.content).toBe('secret plans');
  });

  it('a button press arrives as interactionCreate; deferUpdate then an ephemeral followUp reach the fake', async () => {
    const card = await textChannel().send({
      content: 'Plan: 2 steps',
      components: [
        {
          type: ComponentType.ActionRow,
          components: [
            { type: ComponentType.Button, style: ButtonStyle.Primary, custom_id: 'run:approve', label: 'Approve' },
          ],
        },
      ],
      allowedMentions: NO_PINGS,
    });
    const press = fake.buttonPress({ messageId: card.id, customId: 'run:approve' });
    fake.dispatch('INTERACTION_CREATE', press);
    const interaction = await interactionWithId(String(press.id));
    expect(interaction.isButton() && interaction.customId).toBe('run:approve');
    expect(interaction.isButton() && interaction.message.id).toBe(card.id);
    if (!interaction.isButton()) throw new Error('not a button');

    await interaction.deferUpdate();
    await interaction.followUp({ content: 'Only you can see this.', flags: MessageFlags.Ephemeral });

    const calls = fake.interactionResponses(interaction.id);
    expect(calls.map((c) => [c.method, c.route, c.status])).toEqual([
      ['POST', '/interactions/:interaction/:token/callback', 204],
      ['POST', '/webhooks/:app/:token', 200],
    ]);
    expect((calls[0]?.body as { type: number }).type).toBe(6);
    const followUp = fake.messagesIn(fake.channelId).find((m) => m.message.content === 'Only you can see this.');
    expect(followUp?.ephemeral).toBe(true);
  });

  it('a button answered with update edits its card in place; a reply withResponse returns the new message', async () => {
    const card = await textChannel().send({
      content: 'Plan: 1 step',
      components: [
        {
          type: ComponentType.ActionRow,
          components: [{ type: ComponentType.Button, style: ButtonStyle.Danger, custom_id: 'run:stop', label: 'Stop' }],
        },
      ],
    });
    const stop = fake.buttonPress({ messageId: card.id, customId: 'run:stop' });
    fake.dispatch('INTERACTION_CREATE', stop);
    const stopping = await interactionWithId(String(stop.id));
    if (!stopping.isButton()) throw new Error('not a button');
    await stopping.update({ content: 'Stopped.', components: [] });
    expect(fake.messages.get(card.id)).toMatchObject({ edits: 1, message: { content: 'Stopped.', components: [] } });

    const again = fake.buttonPress({ messageId: card.id, customId: 'run:stop' });
    fake.dispatch('INTERACTION_CREATE', again);
    const pressedAgain = await interactionWithId(String(again.id));
    if (!pressedAgain.isButton()) throw new Error('not a button');
    expect(pressedAgain.message.content).toBe('Stopped.');
    const response = await pressedAgain.reply({ content: 'Already stopped.', withResponse: true });
    expect(response.resource?.message?.content).toBe('Already stopped.');
    expect(fake.messages.get(response.resource?.message?.id ?? '')?.message.content).toBe('Already stopped.');
  });

  it('serves the lookups an adapter makes: channel, message, DM, typing, joining a thread, the app', async () => {
    const firstCall = fake.calls.length;
    const fetched = await client.channels.fetch(fake.channelId, { force: true });
    expect(fetched?.id).toBe(fake.channelId);
    const thread = await textChannel().threads.create({ name: 'Side thread' });
    await thread.join();
    await thread.sendTyping();
    const sent = await thread.send({ content: 'hello', allowedMentions: NO_PINGS });
    expect((await thread.messages.fetch({ message: sent.id, force: true })).content).toBe('hello');
    const bob = fake.user({ username: 'bob' });
    const dm = await (await client.users.fetch(bob.id)).createDM();
    expect(dm.recipientId).toBe(bob.id);
    expect((await client.application!.fetch()).id).toBe(fake.applicationId);
    expect(fake.calls.slice(firstCall).filter((c) => c.status >= 400)).toEqual([]);
    expect(
      ['PUT /channels/:channel/thread-members/@me', 'POST /channels/:channel/typing', 'POST /users/@me/channels'].map(
        (r) => fake.callsTo(r.split(' ')[0]!, r.split(' ')[1]!).length,
      ),
    ).toEqual([1, 1, 1]);
  });

  it('a slash command is deferred then its reply edited in place; a second acknowledgement is refused (40060)', async () => {
    await client.application!.commands.set(
      [
        {
          name: 'steward',
          description: 'Ask Steward',
          options: [
            {
              type: 1,
              name: 'ask',
              description: 'Ask',
              options: [{ type: 3, name: 'request', description: 'What', required: true }],
            },
          ],
        },
      ],
      fake.guildId,
    );
    expect(fake.registeredCommands(fake.guildId).map((c) => (c as { name: string }).name)).toEqual(['steward']);

    const command = fake.slashCommand({ subcommand: 'ask', options: { request: 'count the open issues' } });
    fake.dispatch('INTERACTION_CREATE', command);
    const interaction = (await interactionWithId(String(command.id))) as ChatInputCommandInteraction;
    expect(interaction.options.getSubcommand()).toBe('ask');
    expect(interaction.options.getString('request')).toBe('count the open issues');

    await interaction.deferReply();
    await interaction.editReply({ content: 'There are 12 open issues.', allowedMentions: NO_PINGS });
    const original = fake.messages.get(fake.interaction(interaction.id)?.originalId ?? '');
    expect(original?.message.content).toBe('There are 12 open issues.');
    expect(original?.edits).toBe(1);
    expect((original?.message.flags ?? 0) & MessageFlags.Loading).toBe(0);

    const again = client.rest.post(Routes.interactionCallback(interaction.id, interaction.token), {
      body: { type: 4, data: { content: 'twice' } },
      auth: false,
    });
    expect(await codeOf(again)).toBe(40060);
  });

  it('an autocomplete interaction takes only choices Discord would show (type 8, at most 25, names 1–100 characters)', async () => {
    const typing = () => {
      const payload = fake.slashCommand({ subcommand: 'ask', options: { request: 'cou' }, focused: 'request' });
      fake.dispatch('INTERACTION_CREATE', payload);
      return interactionWithId(String(payload.id)) as Promise<AutocompleteInteraction>;
    };
    const first = await typing();
    expect(first.isAutocomplete()).toBe(true);
    expect(first.options.getFocused(true)).toMatchObject({ name: 'request', value: 'cou' });
    // Discord's API reference, "Interaction Response Object: Autocomplete": choices only, within these limits.
    const callback = (i: AutocompleteInteraction, body: unknown) =>
      codeOf(client.rest.post(Routes.interactionCallback(i.id, i.token), { body, auth: false }));
    expect(await callback(first, { type: 5 })).toBe(50035);
    const many = Array.from({ length: 26 }, (_, k) => ({ name: `c${k}`, value: `c${k}` }));
    expect(await callback(first, { type: 8, data: { choices: many } })).toBe(50035);
    expect(await callback(first, { type: 8, data: { choices: [{ name: '', value: 'x' }] } })).toBe(50035);
    expect(await callback(first, { type: 8, data: { choices: [{ name: 'x', value: 'y'.repeat(101) }] } })).toBe(50035);
    await first.respond([{ name: 'count the open issues', value: 'count the open issues' }]);
    expect(fake.interaction(first.id)?.choices).toEqual([
      { name: 'count the open issues', value: 'count the open issues' },
    ]);
    // Choices answer nothing else: a slash command cannot be answered with them.
    const command = fake.slashCommand({ subcommand: 'ask', options: { request: 'count' } });
    fake.dispatch('INTERACTION_CREATE', command);
    const sent = (await interactionWithId(String(command.id))) as ChatInputCommandInteraction;
    const choices = { type: 8, data: { choices: [] } };
    expect(
      await codeOf(client.rest.post(Routes.interactionCallback(sent.id, sent.token), { body: choices, auth: false })),
    ).toBe(50035);
  });

  it('refuses to register an option that both autocompletes and has choices, as Discord does', async () => {
    const option = {
      type: 3,
      name: 'what',
      description: 'What',
      autocomplete: true,
      choices: [{ name: 'a', value: 'a' }],
    };
    const command = {
      name: 'both',
      description: 'Both',
      options: [{ type: 1, name: 'sub', description: 'Sub', options: [option] }],
    };
    expect(await codeOf(client.application!.commands.set([command as never], fake.guildId))).toBe(50035);
    expect(fake.registeredCommands(fake.guildId).map((c) => (c as { name: string }).name)).not.toContain('both');
  });

  it('refuses a callback more than 3 s after the interaction, and a webhook token older than 15 minutes', async () => {
    const late = fake.slashCommand({ subcommand: 'ask', options: { request: 'slow' } });
    fake.dispatch('INTERACTION_CREATE', late);
    const lateInteraction = (await interactionWithId(String(late.id))) as ChatInputCommandInteraction;
    const timely = fake.slashCommand({ subcommand: 'ask', options: { request: 'fast' } });
    fake.dispatch('INTERACTION_CREATE', timely);
    const timelyInteraction = (await interactionWithId(String(timely.id))) as ChatInputCommandInteraction;
    await timelyInteraction.deferReply();
    try {
      skewMs = 3_100;
      expect(await codeOf(lateInteraction.deferReply())).toBe(10062);
      skewMs = 15 * 60_000 + 1_000;
      expect(await codeOf(timelyInteraction.editReply('too late'))).toBe(50027);
    } finally {
      skewMs = 0;
    }
  });

  it('shows a modal from a select menu choice and receives its submission', async () => {
    const card = await textChannel().send({
      content: 'Pick a breakpoint',
      components: [
        {
          type: ComponentType.ActionRow,
          components: [
            { type: ComponentType.StringSelect, custom_id: 'run:break', options: [{ label: 'Step 1', value: 's1' }] },
          ],
        },
      ],
    });
    const choice = fake.stringSelect({ messageId: card.id, customId: 'run:break', values: ['s1'] });
    fake.dispatch('INTERACTION_CREATE', choice);
    const select = await interactionWithId(String(choice.id));
    if (!select.isStringSelectMenu()) throw new Error('not a select');
    expect(select.values).toEqual(['s1']);
    await select.showModal({
      custom_id: 'plan:edit',
      title: 'Edit the plan',
      components: [
        {
          type: ComponentType.ActionRow,
          components: [
            { type: ComponentType.TextInput, custom_id: 'steps', label: 'Steps', style: TextInputStyle.Paragraph },
          ],
        },
      ],
    });
    expect(fake.interactionResponses(select.id).map((c) => [(c.body as { type: number }).type, c.status])).toEqual([
      [9, 204],
    ]);

    const submit = fake.modalSubmit({ customId: 'plan:edit', fields: { steps: 'one\ntwo' }, messageId: card.id });
    fake.dispatch('INTERACTION_CREATE', submit);
    const modal = await interactionWithId(String(submit.id));
    if (!modal.isModalSubmit()) throw new Error('not a modal submit');
    expect(modal.fields.getTextInputValue('steps')).toBe('one\ntwo');
  });

  it('refuses a message over Discord limits with 50035 and records the problem', async () => {
    const refused = codeOf(textChannel().send({ content: 'x'.repeat(2_001), allowedMentions: NO_PINGS }));
    expect(await refused).toBe(50035);
    const call = fake.callsTo('POST', '/channels/:channel/messages').at(-1);
    expect([call?.status, call?.problems]).toEqual([400, ['content: 2,001 > 2,000']]);
  });

  it('refuses a nonce over 25 characters with 50035 naming it, and creates nothing', async () => {
    const before = fake.messages.size;
    const long = textChannel().send({ content: 'once', nonce: 'n'.repeat(26), enforceNonce: true, ...QUIET });
    expect(await codeOf(long)).toBe(50035);
    const call = fake.callsTo('POST', '/channels/:channel/messages').at(-1);
    expect([call?.status, call?.problems]).toEqual([400, ['nonce: 26 > 25']]);
    expect(fake.messages.size).toBe(before);
    // Twenty-five is allowed, and the nonce comes back on the message, as Discord echoes it.
    const sent = await textChannel().send({ content: 'once', nonce: 'n'.repeat(25), enforceNonce: true, ...QUIET });
    expect(fake.messages.get(sent.id)?.message.nonce).toBe('n'.repeat(25));
  });

  it('with enforce_nonce, a repeat within the window returns the first message and creates and dispatches nothing', async () => {
    const nonce = `once-${Date.now()}`;
    const first = await textChannel().send({ content: 'report', nonce, enforceNonce: true, ...QUIET });
    const repeat = await textChannel().send({ content: 'report again', nonce, enforceNonce: true, ...QUIET });
    expect(repeat.id).toBe(first.id);
    expect(repeat.content).toBe('report');
    expect(fake.callsTo('POST', '/channels/:channel/messages').at(-1)?.status).toBe(200);
    // The reference names only the author: the same nonce from the bot in another channel is the same message too.
    const thread = await textChannel().threads.create({ name: 'Elsewhere' });
    expect((await thread.send({ content: 'elsewhere', nonce, enforceNonce: true, ...QUIET })).id).toBe(first.id);
    // The gateway keeps order: a later message's MESSAGE_CREATE arriving means no repeat's went out before it.
    const later = await textChannel().send({ content: 'later', ...QUIET });
    await waitUntil('the later message', () => dispatches.includes(`MESSAGE_CREATE:${later.id}`));
    expect(dispatches.filter((d) => d === `MESSAGE_CREATE:${first.id}`)).toHaveLength(1);
    expect([...fake.messages.values()].filter((m) => m.message.nonce === nonce)).toHaveLength(1);
  });

  it('a nonce is not enforced without enforce_nonce, nor after the window (five minutes of the fake clock)', async () => {
    const nonce = `twice-${Date.now()}`;
    const first = await textChannel().send({ content: 'one', nonce, enforceNonce: true, ...QUIET });
    const unenforced = await textChannel().send({ content: 'two', nonce, ...QUIET });
    expect(unenforced.id).not.toBe(first.id);
    try {
      skewMs = NONCE_WINDOW_MS + 1_000;
      const late = await textChannel().send({ content: 'three', nonce, enforceNonce: true, ...QUIET });
      expect(late.id).not.toBe(first.id);
      // ...which stands for the nonce from now on (the one unenforced is as old as the first).
      expect((await textChannel().send({ content: 'four', nonce, enforceNonce: true, ...QUIET })).id).toBe(late.id);
    } finally {
      skewMs = 0;
    }
  });

  it('refuses a modal over Discord limits with 50035, leaving the interaction unacknowledged', async () => {
    const card = await textChannel().send({ content: 'Card', allowedMentions: NO_PINGS });
    const press = fake.buttonPress({ messageId: card.id, customId: 'plan:edit' });
    fake.dispatch('INTERACTION_CREATE', press);
    const interaction = await interactionWithId(String(press.id));
    if (!interaction.isButton()) throw new Error('not a button');
    const modal: APIModalInteractionResponseCallbackData = {
      custom_id: 'plan:edit',
      title: 'E'.repeat(46),
      components: [
        {
          type: ComponentType.ActionRow,
          components: [
            { type: ComponentType.TextInput, custom_id: 'steps', label: 'Steps', style: TextInputStyle.Short },
          ],
        },
      ],
    };
    expect(await codeOf(interaction.showModal(modal))).toBe(50035);
    expect(fake.interactionResponses(interaction.id).map((c) => c.problems)).toEqual([['title: 46 > 45']]);
    expect(fake.interaction(interaction.id)?.callbackType).toBeUndefined();
  });

  it('a 429 on an interaction callback is retried after retry_after, still inside the 3 s window', async () => {
    const command = fake.slashCommand({ subcommand: 'ask', options: { request: 'busy' } });
    fake.throttle({ route: '/interactions/:interaction/:token/callback' }, { times: 1, retryAfterSeconds: 0.3 });
    fake.dispatch('INTERACTION_CREATE', command);
    const interaction = (await interactionWithId(String(command.id))) as ChatInputCommandInteraction;
    await interaction.deferReply();
    expect(fake.interactionResponses(interaction.id).map((c) => c.status)).toEqual([429, 204]);
  });

  it('a 429 on an edit is waited out for retry_after and the edit then lands', async () => {
    const message = await textChannel().send({ content: 'v1', allowedMentions: NO_PINGS });
    fake.throttle(
      { method: 'PATCH', route: '/channels/:channel/messages/:message' },
      { times: 1, retryAfterSeconds: 0.3 },
    );
    await message.edit({ content: 'v2' });
    const calls = fake.callsTo('PATCH', '/channels/:channel/messages/:message');
    expect(calls.map((c) => c.status)).toEqual([429, 200]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(300);
    expect(fake.messages.get(message.id)?.message.content).toBe('v2');
  });

  it('resumes a dropped connection without identifying again, replaying the missed event and the last one', async () => {
    const before = fake.messageCreate({ content: 'seen before the drop', mentionsBot: true });
    fake.dispatch('MESSAGE_CREATE', before);
    await waitUntil('the event before the drop', () => messagesWithId(before.id).length === 1);

    fake.dropConnection({ resumable: true });
    const missed = fake.messageCreate({ content: 'sent while disconnected', mentionsBot: true });
    fake.dispatch('MESSAGE_CREATE', missed);

    await waitUntil('the missed event', () => messagesWithId(missed.id).length === 1);
    expect([fake.identifies, fake.resumes]).toEqual([1, 1]);
    // Redelivered on resume. discord.js itself drops a MESSAGE_CREATE whose message it still caches (not the bot's
    // own, nor any interaction), so an adapter must still de-duplicate what reaches it by id.
    expect(dispatches.filter((d) => d === `MESSAGE_CREATE:${before.id}`)).toHaveLength(2);
    expect(messagesWithId(before.id)).toHaveLength(1);
  });
});

describe('fake Discord refusals at login', () => {
  it('closes the gateway with 4014 when the app asks for Message Content without being allowed it', async () => {
    const greedy = new Client({
      intents: [...INTENTS, GatewayIntentBits.MessageContent],
      rest: { api: fake.apiUrl },
    });
    try {
      await expect(greedy.login(fake.token)).rejects.toThrow(/disallowed intents/i);
    } finally {
      await greedy.destroy();
    }
  });

  it('answers a wrong token with 401, which discord.js reports as an invalid token', async () => {
    const stranger = new Client({ intents: INTENTS, rest: { api: fake.apiUrl } });
    try {
      await expect(stranger.login('wrong-token')).rejects.toThrow(/invalid token/i);
    } finally {
      await stranger.destroy();
    }
  });
});

describe('fake Discord with two processes on one bot token', () => {
  it('gives each session its own READY and both every event; a destroyed client loses its session', async () => {
    const shared = await startFakeDiscord();
    const start = async (api: string) => {
      const c = new Client({ intents: INTENTS, partials: [Partials.Channel], rest: { api } });
      const raw: string[] = [];
      c.on('raw', (p: { t?: string; d?: { id?: string; session_id?: string } }) =>
        raw.push(`${p.t}:${p.d?.session_id ?? p.d?.id}`),
      );
      await c.login(shared.token);
      await waitUntil('the client to be ready', () => c.isReady());
      return { c, raw };
    };
    const one = await start(shared.apiUrlAs('one'));
    const two = await start(shared.apiUrlAs('two'));
    try {
      // Discord sends READY to the session that identified, never to the others on the token.
      expect(one.raw.filter((t) => t.startsWith('READY'))).toEqual(['READY:session-1']);
      expect(two.raw.filter((t) => t.startsWith('READY'))).toEqual(['READY:session-2']);
      const mention = shared.messageCreate({ content: 'who takes this?', mentionsBot: true });
      shared.dispatch('MESSAGE_CREATE', mention);
      await waitUntil('both sessions to get the mention', () =>
        [one, two].every((p) => p.raw.includes(`MESSAGE_CREATE:${mention.id}`)),
      );

      // Each process's REST calls are told apart by the door it came through (the token is the same).
      const say = (c: Client, content: string) =>
        (c.channels.cache.get(shared.channelId) as TextChannel).send({ content, allowedMentions: NO_PINGS });
      await say(one.c, 'one');
      await say(two.c, 'two');
      const posts = shared.callsTo('POST', '/channels/:channel/messages');
      expect(posts.map((c) => [c.caller, (c.body as { content?: string }).content])).toEqual([
        ['one', 'one'],
        ['two', 'two'],
      ]);

      // destroy() closes with 1000, which ends the session for good: the other one goes on alone.
      await one.c.destroy();
      await waitUntil('the session to end', () => shared.sessions === 1);
      const later = shared.messageCreate({ content: 'still here?', mentionsBot: true });
      expect(shared.dispatch('MESSAGE_CREATE', later)?.s).toBeGreaterThan(0);
      await waitUntil('the other session to get it', () => two.raw.includes(`MESSAGE_CREATE:${later.id}`));
      expect(one.raw).not.toContain(`MESSAGE_CREATE:${later.id}`);
    } finally {
      await one.c.destroy();
      await two.c.destroy();
      await shared.close();
    }
  });
});

/**
 * The fake Discord's rate limits and permissions, as Discord has them: buckets per route and major parameter with
 * their real state in the headers, 429s past a bucket or the global limit, and the bot's permissions from roles and
 * channel overwrites deciding what REST accepts (fake-discord-ratelimits.ts, fake-discord-permissions.ts).
 */
import { PermissionFlagsBits as P, REST, Routes } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeDiscord, type FakeDiscord } from './fake-discord-server.ts';

let fake: FakeDiscord | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** One raw call, as Discord sees it: status, body and headers. */
async function call(f: FakeDiscord, method: string, path: string, body?: unknown) {
  const res = await fetch(`${f.apiUrl}/v10${path}`, {
    method,
    headers: { authorization: `Bot ${f.token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

const quiet = (content: string) => ({ content, allowed_mentions: { parse: [] } });

describe('fake Discord rate limits', () => {
  it('counts POST messages per channel, 5 per 5 s, with the bucket state in the headers and a 429 past it', async () => {
    fake = await startFakeDiscord();
    const path = `/channels/${fake.channelId}/messages`;
    const remaining: string[] = [];
    for (let n = 0; n < 5; n++) {
      const r = await call(fake, 'POST', path, quiet(`m${n}`));
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
      remaining.push(r.headers.get('x-ratelimit-remaining') ?? '');
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const over = await call(fake, 'POST', path, quiet('m5'));
    expect(over.status).toBe(429);
    expect(over.body.global).toBe(false);
    expect(over.body.retry_after).toBeGreaterThan(4);
    expect(over.body.retry_after).toBeLessThanOrEqual(5);
    expect(over.headers.get('x-ratelimit-scope')).toBe('user');
    expect(Number(over.headers.get('retry-after'))).toBe(5);
    // Nothing was created by the refused call.
    expect(fake.messagesIn(fake.channelId)).toHaveLength(5);

    // Another channel (another major parameter) has a bucket of its own, under the same bucket id.
    const dm = (await call(fake, 'POST', '/users/@me/channels', { recipient_id: fake.defaultUser.id })).body;
    const other = await call(fake, 'POST', `/channels/${String(dm.id)}/messages`, quiet('elsewhere'));
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(other.headers.get('x-ratelimit-bucket')).toBe(over.headers.get('x-ratelimit-bucket'));
    // Another route too: editing counts apart from posting.
    const first = fake.messagesIn(fake.channelId)[0]!.message.id;
    const edit = await call(fake, 'PATCH', `${path}/${first}`, quiet('edited'));
    expect(edit.status).toBe(200);
    expect(edit.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('refuses the 51st call in a second on one token, whatever the route, as a global 429', async () => {
    fake = await startFakeDiscord();
    const results = await Promise.all(
      Array.from({ length: 51 }, (_, n) => call(fake!, 'GET', `/users/${n % 2 ? '@me' : fake!.defaultUser.id}`)),
    );
    // GET /users/:user is a bucket of 5 per 5 s of its own: calls past it are refused per route or globally.
    const global = results.filter((r) => r.status === 429 && r.body.global === true);
    expect(global.length).toBeGreaterThanOrEqual(1);
    expect(global[0]!.headers.get('x-ratelimit-global')).toBe('true');
    expect(global[0]!.headers.get('x-ratelimit-scope')).toBe('global');
  });

  it("discord.js's REST client queues on the headers: seven posts to one channel, no 429, the sixth after the reset", async () => {
    // A window of 1 s keeps the test short; the rule is the same.
    fake = await startFakeDiscord({
      rateLimits: { 'POST /channels/:channel/messages': { limit: 5, windowMs: 1_000, source: 'test' } },
    });
    const rest = new REST({ api: fake.apiUrl }).setToken(fake.token);
    const started = performance.now();
    for (let n = 0; n < 7; n++) await rest.post(Routes.channelMessages(fake.channelId), { body: quiet(`queued ${n}`) });
    const posts = fake.callsTo('POST', '/channels/:channel/messages');
    expect(posts.map((c) => c.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(posts[5]!.tick - started).toBeGreaterThanOrEqual(900);
  });
});

describe('fake Discord permissions', () => {
  it("the bot's permissions come from its role and @everyone, less the channel's overwrites, and threads inherit them", async () => {
    fake = await startFakeDiscord();
    const everything = fake.botPermissionsIn(fake.channelId)!;
    expect(everything & P.Administrator).toBe(0n);
    expect(everything & P.CreatePublicThreads).toBe(P.CreatePublicThreads);
    // A deny on @everyone applies to the bot even though its own role grants it; an allow on the bot's role wins back.
    fake.setOverwrite(fake.channelId, { id: fake.guildId, type: 0, deny: P.CreatePublicThreads | P.SendMessages });
    expect(fake.botPermissionsIn(fake.channelId)! & (P.CreatePublicThreads | P.SendMessages)).toBe(0n);
    fake.setOverwrite(fake.channelId, { id: fake.botRoleId, type: 0, allow: P.SendMessages });
    expect(fake.botPermissionsIn(fake.channelId)! & P.SendMessages).toBe(P.SendMessages);
    // A member overwrite on the bot itself comes last.
    fake.setOverwrite(fake.channelId, { id: fake.botUser.id, type: 1, deny: P.SendMessages });
    expect(fake.botPermissionsIn(fake.channelId)! & P.SendMessages).toBe(0n);
  });

  it('refuses posting, threads, embeds and everything without View Channel, with 50013 or 50001', async () => {
    fake = await startFakeDiscord({ rateLimits: false });
    const ch = fake.channelId;
    const posted = await call(fake, 'POST', `/channels/${ch}/messages`, quiet('before'));
    expect(posted.status).toBe(200);
    const thread = await call(fake, 'POST', `/channels/${ch}/messages/${String(posted.body.id)}/threads`, {
      name: 'a thread',
    });
    expect(thread.status).toBe(200);

    fake.setOverwrite(ch, { id: fake.guildId, type: 0, deny: P.SendMessages | P.SendMessagesInThreads });
    const noSend = await call(fake, 'POST', `/channels/${ch}/messages`, quiet('after'));
    expect([noSend.status, noSend.body.code, noSend.body.message]).toEqual([403, 50013, 'Missing Permissions']);
    expect(fake.calls.at(-1)!.problems).toEqual(['missing permission: SEND_MESSAGES']);
    // In the thread it is SEND_MESSAGES_IN_THREADS that counts, from the parent's overwrites.
    const inThread = await call(fake, 'POST', `/channels/${String(thread.body.id)}/messages`, quiet('in thread'));
    expect([inThread.status, inThread.body.code]).toEqual([403, 50013]);
    expect(fake.calls.at(-1)!.problems).toEqual(['missing permission: SEND_MESSAGES_IN_THREADS']);

    fake.setOverwrite(ch, { id: fake.guildId, type: 0, deny: P.CreatePublicThreads | P.EmbedLinks });
    const second = await call(fake, 'POST', `/channels/${ch}/messages`, quiet('again'));
    const noThread = await call(fake, 'POST', `/channels/${ch}/messages/${String(second.body.id)}/threads`, {
      name: 'another',
    });
    expect([noThread.status, noThread.body.code]).toEqual([403, 50013]);
    expect(fake.calls.at(-1)!.problems).toEqual(['missing permission: CREATE_PUBLIC_THREADS']);
    const embed = await call(fake, 'POST', `/channels/${ch}/messages`, { ...quiet(''), embeds: [{ title: 'card' }] });
    expect([embed.status, embed.body.code]).toEqual([403, 50013]);

    fake.setOverwrite(ch, { id: fake.guildId, type: 0, deny: P.ViewChannel });
    const unseen = await call(fake, 'GET', `/channels/${ch}`);
    expect([unseen.status, unseen.body.code, unseen.body.message]).toEqual([403, 50001, 'Missing Access']);
    // A DM has no permissions to check.
    const dm = (await call(fake, 'POST', '/users/@me/channels', { recipient_id: fake.defaultUser.id })).body;
    expect((await call(fake, 'POST', `/channels/${String(dm.id)}/messages`, quiet('dm'))).status).toBe(200);
  });
});

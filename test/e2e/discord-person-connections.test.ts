/**
 * Issue 28 on Discord, end to end: the real discord.js client over the fake Discord (through the shared chat driver,
 * test/chat/discord-chat.ts), the real engine on PostgreSQL, McpHost with sealed tokens, Steward's web origin and the
 * SDK's own OAuth server in front of an MCP server that records each call's token subject. Two people connect, each
 * from their own private link, each confirms by pressing a button Discord showed them alone, and each one's run
 * reaches the server under their own subject; a connection made with someone else's account is refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { discordChat, type DiscordChat } from '../chat/discord-chat.ts';
import type { Shown, Who } from '../chat/chat.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { browser, connectOrigin, connectThrough, linkIn } from '../helpers/connect-origin.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { planReply } from './harness.ts';

let c: DiscordChat | undefined;
let oauth: OAuthMcpServer | undefined;
afterEach(async () => {
  await c?.close();
  await oauth?.close();
  c = undefined;
  oauth = undefined;
});

/** The latest message Discord showed `who` alone that asks about a connection (its buttons are ours). */
function question(chat: DiscordChat, who: Who): Promise<Shown> {
  return chat.waitFor(`the question to ${who}`, () =>
    chat
      .told(who)
      .filter((m) => m.actions.some((id) => id.startsWith('stwc:use:')))
      .at(-1),
  );
}

describe('per-person connections on Discord', () => {
  it("two people connect from their own private links, confirm with a button only they see, and each one's run goes out under their own subject", async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const origin = connectOrigin(oauth);
    const plan = planReply([{ id: 'me', tool: 'tracker.whoami', args: {}, dependsOn: [] }], { summary: 'Who am I' });
    c = await discordChat({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: oauth.url, auth: 'person', risk: 'low' })],
      script: byRole({ planner: [plan, plan], synthesizer: ['Done.', 'Done.'] }),
      setup: origin.setup,
    });
    const chat = c;
    await chat.steward.recover();

    // Ada connects with no run waiting: the command's private answer holds her link.
    expect((await chat.command('connections', 'ada')).join('\n')).toContain('`tracker`: not connected');
    const answer = (await chat.command('connections connect tracker', 'ada')).join('\n');
    const adaLink = linkIn(answer);
    expect(answer).toMatch(/\[Connect tracker\]\(<http:\/\/127\.0\.0\.1:\d+\/connect\/[\w-]+>\)/);
    expect(await (await connectThrough(adaLink!, browser('ada@tracker'))).text()).toContain('Almost connected');
    const asked = await question(chat, 'ada');
    expect(asked.labels).toEqual(['Use this connection', 'Not me']);
    expect(chat.told('bob')).toEqual([]);
    // Bob cannot answer for her: the button's press comes from his own identity, and nothing of his waits.
    expect((await chat.pressPrivate(asked, 'connection-use', 'bob')).join('\n')).toContain(
      'No connection to `tracker` waits for you',
    );
    expect((await chat.pressPrivate(asked, 'connection-use', 'ada')).join('\n')).toContain('Connected `tracker`');

    const adaThread = await chat.mention('who am I on the tracker?', 'ada');
    await chat.waitFor("Ada's call", () => oauth!.calls.some((call) => call.subject === 'ada@tracker'));
    expect(chat.card(adaThread).text).toMatch(/`tracker\.whoami` as <@\d+>/);

    // Bob asks with no connection: his run waits, and his link reaches him alone (a direct message).
    await chat.mention('and me?', 'bob');
    const bobLink = await chat.waitFor('a link for Bob', () =>
      chat
        .told('bob')
        .map((m) => linkIn(m.text))
        .find(Boolean),
    );
    // Eve got hold of it and allows with her account: Bob says it was not him; nothing ran as Eve.
    expect(await (await connectThrough(bobLink, browser('eve@tracker'))).text()).toContain('Almost connected');
    expect((await chat.pressPrivate(await question(chat, 'bob'), 'connection-notme', 'bob')).join('\n')).toContain(
      'Forgotten: nothing runs with that account',
    );
    expect(oauth.calls.map((call) => call.subject)).toEqual(['ada@tracker']);
    // His own account, through a new link: his waiting run goes on as him.
    const again = linkIn((await chat.command('connections connect tracker', 'bob')).join('\n'));
    await connectThrough(again!, browser('bob@tracker'));
    await chat.pressPrivate(await question(chat, 'bob'), 'connection-use', 'bob');
    await chat.waitFor("Bob's call", () => oauth!.calls.some((call) => call.subject === 'bob@tracker'));
    expect(oauth.calls.map((call) => call.subject)).toEqual(['ada@tracker', 'bob@tracker']);
  });
});

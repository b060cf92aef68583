/** `connections` in words, the same on every platform: the command parsed, and each answer said. */
import { describe, expect, it } from 'vitest';
import { connectionsText, parseConnectionsCommand, type ConnectionsStyle } from '../../src/bot/connection-words.ts';

const style: ConnectionsStyle = {
  link: (url, words) => `[${words}](${url})`,
  command: (action, server) => `connections${action ? ` ${action} ${server ?? ''}` : ''}`,
};

describe('connections in words', () => {
  it('reads list, connect and disconnect; anything else says how to type it', () => {
    expect(parseConnectionsCommand([], style)).toEqual({ kind: 'list' });
    expect(parseConnectionsCommand(['List'], style)).toEqual({ kind: 'list' });
    expect(parseConnectionsCommand(['Connect', 'tracker'], style)).toEqual({ kind: 'connect', server: 'tracker' });
    expect(parseConnectionsCommand(['use', 'tracker'], style)).toEqual({ kind: 'use', server: 'tracker' });
    expect(parseConnectionsCommand(['NotMe', 'tracker'], style)).toEqual({ kind: 'refuse', server: 'tracker' });
    expect(parseConnectionsCommand(['constructor', 'tracker'], style)).toHaveProperty('note');
    expect(parseConnectionsCommand(['disconnect', 'tracker'], style)).toEqual({
      kind: 'disconnect',
      server: 'tracker',
    });
    for (const bad of [['connect'], ['disconnect', 'a', 'b'], ['remove', 'tracker'], ['list', 'x']])
      expect(parseConnectionsCommand(bad, style)).toEqual({
        note: 'Use `connections` (your connections), `connections connect <server>` or `connections disconnect <server>` (and `use` or `notme` to answer about a connection that waits for you).',
      });
  });

  it('says where the person stands with each server, and what to type next', () => {
    const at = new Date('2026-12-05T17:58:30Z');
    const text = connectionsText(
      {
        kind: 'list',
        connections: [
          { server: 'tracker', state: 'connected', connectedAt: at, pending: false },
          { server: 'crm', state: 'expired', connectedAt: at, pending: false },
          { server: 'docs', state: 'none', connectedAt: null, pending: true },
        ],
      },
      style,
    );
    expect(text.split('\n')).toEqual([
      'Servers that run your steps with your own account:',
      '• `tracker`: connected since 2026-12-05 17:58 UTC (`connections disconnect tracker` disconnects)',
      '• `crm`: expired since 2026-12-05 17:58 UTC; connect again: `connections connect crm`',
      '• `docs`: not connected (`connections connect docs`); a connection made in a browser not signed in as you waits for your answer: `connections use docs` or `connections notme docs`',
    ]);
  });

  it('gives the link, says a disconnect as it went, and names the servers when the name is unknown', () => {
    expect(
      connectionsText({ kind: 'link', server: 'tracker', link: 'https://s.example/connect/x', minutes: 15 }, style),
    ).toBe(
      '[Connect tracker](https://s.example/connect/x): for you only; it works once, for 15 minutes. Once you allow Steward there, your steps on `tracker` run as you.',
    );
    expect(connectionsText({ kind: 'link', server: 'tracker', link: null, minutes: 15 }, style)).toContain(
      'STEWARD_DASHBOARD_PORT',
    );
    expect(connectionsText({ kind: 'disconnected', server: 'tracker', known: true, revoked: true }, style)).toBe(
      'Disconnected `tracker`: its server revoked your authorization, and Steward forgot it.',
    );
    expect(connectionsText({ kind: 'disconnected', server: 'tracker', known: true, revoked: false }, style)).toMatch(
      /offers no revocation .* remove Steward's access in your account there\.$/,
    );
    expect(connectionsText({ kind: 'disconnected', server: 'tracker', known: false, revoked: false }, style)).toBe(
      'You had no connection to `tracker`; nothing changed.',
    );
    // A typed name is shown in the characters a server name may have, so it cannot end the code marks or ping anyone.
    expect(connectionsText({ kind: 'unknown', server: '`<!channel>`@here', servers: ['tracker', 'docs'] }, style)).toBe(
      '`???channel???here` is not a server that connects per person. Those are: `tracker`, `docs`.',
    );
    expect(connectionsText({ kind: 'off' }, style)).toMatch(/^No server here connects per person/);
  });
  it("lists workspace servers apart, says only an approver connects them, and that their link connects the workspace's account", () => {
    const at = new Date('2026-12-05T17:58:30Z');
    const text = connectionsText(
      {
        kind: 'list',
        connections: [
          { server: 'tracker', state: 'none', connectedAt: null, pending: false },
          { server: 'wiki', state: 'connected', connectedAt: at, pending: false, workspace: true },
          { server: 'crm', state: 'none', connectedAt: null, pending: false, workspace: true },
        ],
      },
      style,
    );
    expect(text.split('\n')).toEqual([
      'Servers that run your steps with your own account:',
      '• `tracker`: not connected (`connections connect tracker`)',
      "Servers that run everyone's steps as the workspace (an approver connects them):",
      '• `wiki`: connected for the workspace since 2026-12-05 17:58 UTC (an approver disconnects: `connections disconnect wiki`)',
      '• `crm`: not connected; Connect for the workspace (approvers): `connections connect crm`',
    ]);
    expect(connectionsText({ kind: 'approverOnly', server: 'crm' }, style)).toBe(
      '`crm` runs as the workspace, with one connection for everyone: only an approver can connect or disconnect it. Ask one to connect it.',
    );
    expect(
      connectionsText(
        { kind: 'link', server: 'crm', link: 'https://s.example/connect/x', minutes: 15, workspace: true },
        style,
      ),
    ).toMatch(
      /^\[Connect crm for the workspace\]\(https:\/\/s\.example\/connect\/x\): for you only; .* every step on `crm` runs with it, whoever asked\.$/,
    );
  });
});

/**
 * Autocomplete for `/steward` end to end on Discord (issue 32): while a person types into `workflow`'s or
 * `assistant`'s command or `connections`' server, Discord asks (interaction type 4) and Steward answers with what
 * fits (type 8, checked by the fake as Discord does): their own workflows as whole commands, the Assistants, the
 * servers their list names. Nothing is claimed, run or posted; a failing or slow lookup still answers in time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { connectOrigin } from '../helpers/connect-origin.ts';
import { everythingStdioConfig, serverConfig } from '../helpers/mcp-servers.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../helpers/oauth-mcp-server.ts';
import { startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let oauth: OAuthMcpServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  await oauth?.close();
  h = undefined;
  oauth = undefined;
});

const values = (choices: { value: string }[]) => choices.map((c) => c.value);

/** Workflows owned by `owner` on Discord, saved as a person's approval would save them. */
async function seedWorkflows(harness: DiscordHarness, ownerId: string, names: string[]): Promise<void> {
  const store = new PgWorkflowStore(harness.db.db, { owner: 'seed' });
  const plan = planSchema.parse({
    summary: 'Say hi',
    needsTools: true,
    steps: [{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }],
  });
  const owner = { id: ownerId, channel: 'discord' };
  const conversation = { channel: 'discord', key: `${harness.discord.guildId}:${harness.discord.channelId}` };
  for (const name of names) {
    const first = { plan, pins: [], risk: 'low' as const, note: 'seeded', sourceRunId: null, createdBy: owner };
    await store.createWorkflow({ id: `wf-${name}`, name, owner, conversation, review: 'saved', first }, new Date());
  }
}

describe('/steward autocomplete, end to end on postgres', () => {
  it("workflow offers the person's own workflows as whole commands, filtered as typed, at most 25; nothing is claimed or posted", async () => {
    h = await startDiscordHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    await seedWorkflows(h, h.ada.id, ['digest', ...Array.from({ length: 29 }, (_, k) => `report${k}`)]);
    await seedWorkflows(h, h.bob.id, ['bobs-secret']);
    const posted = () => h!.discord.messagesIn(h!.discord.channelId).length;
    const before = posted();

    expect(values(await h.autocomplete('workflow', { command: 'dig' }, 'command'))).toEqual([
      'workflow digest',
      'workflow digest run',
    ]);
    // Case does not matter, and a word inside the command matches too.
    expect(values(await h.autocomplete('workflow', { command: 'GEST R' }, 'command'))).toEqual(['workflow digest run']);
    const all = await h.autocomplete('workflow', { command: '' }, 'command');
    expect(all).toHaveLength(25);
    expect(all[0]).toEqual({ name: 'workflows', value: 'workflows' });
    expect(values(all).join(' ')).not.toContain('bobs-secret');
    expect(values(await h.autocomplete('workflow', { command: 'workflow b' }, 'command', { user: h.bob }))).toEqual([
      'workflow bobs-secret',
      'workflow bobs-secret run',
    ]);

    expect(posted()).toBe(before);
    expect(await h.db.db.selectFrom('inbound_events').selectAll().execute()).toEqual([]);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([]);
    expect(h.llm.requests).toEqual([]);
  });

  it('assistant offers the Assistants by name; a lookup that fails, or is too slow, answers an empty list in time', async () => {
    h = await startDiscordHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    expect(values(await h.autocomplete('assistant', { command: '' }, 'command'))).toEqual(['assistants']);
    for (const command of ['create ops "Operations"', 'create research "Reading"']) {
      const id = await h.slash('assistant', { command }, { user: h.boss });
      await h.waitFor('the Assistant created', () => h!.privateTexts(id).find((t) => t.includes('Created')));
    }
    expect(values(await h.autocomplete('assistant', { command: 'OP' }, 'command'))).toEqual(['assistant ops']);
    expect(values(await h.autocomplete('assistant', { command: 'assistant' }, 'command'))).toEqual([
      'assistants',
      'assistant ops',
      'assistant research',
    ]);

    vi.spyOn(h.steward, 'workflowsOf').mockRejectedValue(new Error('database gone'));
    expect(await h.autocomplete('workflow', { command: 'dig' }, 'command')).toEqual([]);
    vi.spyOn(h.steward, 'workflowsOf').mockReturnValue(new Promise(() => undefined));
    const started = Date.now();
    expect(await h.autocomplete('workflow', { command: 'dig' }, 'command')).toEqual([]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("connections' server offers the servers the list names", async () => {
    oauth = await startOAuthMcpServer({ consentAs: 'nobody' });
    const origin = connectOrigin(oauth);
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [serverConfig('tracker', { url: oauth.url, auth: 'person', risk: 'low' })],
      script: byRole({}),
      setup: origin.setup,
    });
    const options = { action: 'connect', server: 'TRA' };
    expect(await h.autocomplete('connections', options, 'server')).toEqual([{ name: 'tracker', value: 'tracker' }]);
    expect(await h.autocomplete('connections', { server: 'zzz' }, 'server')).toEqual([]);
  });
});

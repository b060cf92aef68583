/**
 * The Assistant store (issue 16) on PostgreSQL and PGlite: grants resolve tool → server → default as stored, every
 * change (create, edit, grant, revoke, default, delete, and the bootstrap file) writes its audit row with the old and
 * new values, the file's upserts write only what differs, and changes by command are refused for non-approvers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssistantDefinition } from '../../src/engine/assistant/assistants.ts';
import { resolveGrant } from '../../src/engine/assistant/assistants.ts';
import { AssistantFlow } from '../../src/engine/flows/assistant-flow.ts';
import type { ToolRunner } from '../../src/engine/ports.ts';
import type { Actor, ToolInfo } from '../../src/engine/types.ts';
import { PgAssistantStore } from '../../src/store/pg-assistant-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 11, 3, 9, minute));
const ada: Actor = { id: 'U1', name: 'Ada', channel: 'slack' };
const bob: Actor = { id: 'U2', name: 'Bob', channel: 'slack' };

function definition(overrides: Partial<AssistantDefinition> = {}): AssistantDefinition {
  return {
    name: 'ops',
    purpose: 'Operations',
    instructions: 'Be careful.',
    models: {},
    defaultGrant: 'deny',
    grants: [],
    ...overrides,
  };
}

function tool(name: string): ToolInfo {
  const [server = '', short = ''] = name.split('.');
  return {
    name,
    server,
    tool: short,
    description: name,
    inputSchema: { type: 'object' },
    annotations: {},
    policy: { allowed: true, timeoutMs: 1000 },
    fingerprint: name,
    definition: {},
  };
}

const tools: ToolRunner = {
  listTools: () => ['fs.read', 'fs.write', 'web.get'].map(tool),
  callTool: () => Promise.reject(new Error('no calls here')),
};

describe.each(['postgres', 'pglite'] as const)('PgAssistantStore on %s', (kind) => {
  let db: TestDatabase;
  let store: PgAssistantStore;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    store = new PgAssistantStore(db.db);
  }, 60_000);
  afterAll(() => db.close());

  it('resolves a tool by its own grant, else its server grant, else the default, as stored and changed', async () => {
    const name = `chain-${kind}`;
    expect(await store.createAssistant(definition({ name }), ada, at(0))).toBe(true);
    expect(await store.createAssistant(definition({ name }), ada, at(0))).toBe(false);
    const grantOf = async (t: string) => resolveGrant((await store.getAssistant(name))!, t);

    expect(await grantOf('fs.read')).toEqual({ effect: 'deny', from: 'default' });
    await store.setGrant(name, { scope: 'server', target: 'fs', effect: 'allow' }, ada, at(1));
    expect(await grantOf('fs.read')).toEqual({ effect: 'allow', from: 'server' });
    await store.setGrant(name, { scope: 'tool', target: 'fs.write', effect: 'deny' }, ada, at(2));
    expect(await grantOf('fs.write')).toEqual({ effect: 'deny', from: 'tool' });
    expect(await grantOf('fs.read')).toEqual({ effect: 'allow', from: 'server' });
    expect(await grantOf('web.get')).toEqual({ effect: 'deny', from: 'default' });

    await store.editAssistant(name, { defaultGrant: 'allow' }, ada, at(3));
    expect(await grantOf('web.get')).toEqual({ effect: 'allow', from: 'default' });
    expect(await store.revokeGrant(name, 'server', 'fs', ada, at(4))).toBe('revoked');
    expect(await store.revokeGrant(name, 'server', 'fs', ada, at(4))).toBe('none');
    expect(await grantOf('fs.read')).toEqual({ effect: 'allow', from: 'default' });
    expect(await grantOf('fs.write')).toEqual({ effect: 'deny', from: 'tool' });
  });

  it('writes one audit row per change, with who, when, and the values before and after', async () => {
    const name = `audit-${kind}`;
    await store.createAssistant(definition({ name }), ada, at(0));
    await store.editAssistant(name, { instructions: 'Be quick.' }, ada, at(1));
    await store.editAssistant(name, { instructions: 'Be quick.' }, ada, at(2)); // nothing differs: no row
    await store.setGrant(name, { scope: 'tool', target: 'fs.read', effect: 'allow' }, ada, at(3));
    await store.setGrant(name, { scope: 'tool', target: 'fs.read', effect: 'deny' }, bob, at(4));
    await store.editAssistant(name, { defaultGrant: 'allow' }, ada, at(5));
    await store.revokeGrant(name, 'tool', 'fs.read', ada, at(6));
    expect(await store.deleteAssistant(name, ada, at(7))).toBe(true);
    expect(await store.getAssistant(name)).toBeNull();
    expect(await store.deleteAssistant(name, ada, at(8))).toBe(false);

    const changes = (await store.listChanges(name, 20)).reverse();
    expect(changes.map((c) => [c.action, c.changedBy, c.at.toISOString()])).toEqual([
      ['create', 'slack:U1', at(0).toISOString()],
      ['edit', 'slack:U1', at(1).toISOString()],
      ['grant', 'slack:U1', at(3).toISOString()],
      ['grant', 'slack:U2', at(4).toISOString()],
      ['default', 'slack:U1', at(5).toISOString()],
      ['revoke', 'slack:U1', at(6).toISOString()],
      ['delete', 'slack:U1', at(7).toISOString()],
    ]);
    expect(changes[1]).toMatchObject({ before: { instructions: 'Be careful.' }, after: { instructions: 'Be quick.' } });
    expect(changes[3]).toMatchObject({
      changedByName: 'Bob',
      before: { scope: 'tool', target: 'fs.read', effect: 'allow' },
      after: { scope: 'tool', target: 'fs.read', effect: 'deny' },
    });
    expect(changes[4]).toMatchObject({ before: { defaultGrant: 'deny' }, after: { defaultGrant: 'allow' } });
    expect(changes[5]).toMatchObject({ before: { target: 'fs.read', effect: 'deny' }, after: null });
    expect(changes[6]).toMatchObject({ before: { name, grants: [] }, after: null });
  });

  it('lets several processes starting at once apply the same file: one creates, none fails', async () => {
    const name = `race-${kind}`;
    const def = definition({ name, grants: [{ scope: 'server', target: 'fs', effect: 'allow' }] });
    // Separate transactions on separate connections (on PostgreSQL), all finding no row at first.
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => store.applyDefinitions([def], at(0))));
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    expect((await store.getAssistant(name))?.grants).toEqual(def.grants);
    expect((await store.listChanges(name, 20)).map((c) => c.action)).toEqual(['create']);
  });

  it('applies the bootstrap file as upserts audited as "file", writing only what differs', async () => {
    const name = `file-${kind}`;
    const def = definition({
      name,
      models: { planner: 'anthropic:claude-sonnet' },
      grants: [
        { scope: 'server', target: 'fs', effect: 'allow' },
        { scope: 'tool', target: 'fs.write', effect: 'deny' },
      ],
    });
    await store.applyDefinitions([def], at(0));
    await store.applyDefinitions([def], at(1)); // unchanged: nothing written
    // A person adds a grant; the next start's file leaves it alone and changes only what it names.
    await store.setGrant(name, { scope: 'server', target: 'web', effect: 'allow' }, ada, at(2));
    await store.applyDefinitions([{ ...def, purpose: 'Ops, renamed' }], at(3));

    const stored = (await store.getAssistant(name))!;
    expect(stored).toMatchObject({ purpose: 'Ops, renamed', models: { planner: 'anthropic:claude-sonnet' } });
    expect(stored.grants).toEqual([
      { scope: 'server', target: 'fs', effect: 'allow' },
      { scope: 'server', target: 'web', effect: 'allow' },
      { scope: 'tool', target: 'fs.write', effect: 'deny' },
    ]);
    const changes = (await store.listChanges(name, 20)).reverse();
    expect(changes.map((c) => [c.action, c.changedBy])).toEqual([
      ['create', 'file'],
      ['grant', 'slack:U1'],
      ['edit', 'file'],
    ]);
    expect(changes[2]).toMatchObject({ before: { purpose: 'Operations' }, after: { purpose: 'Ops, renamed' } });
  });

  it('lets anyone list and show, and only approvers change; unknown names, tools and words are refused (as warnings)', async () => {
    const flow = new AssistantFlow({ assistants: store, tools, clock: () => at(9), approvers: ['slack:U1'] });
    // Each answer as its level and words, the level as the console marks it: `!` a refusal, `i` the rest.
    const say = async (actor: Actor, text: string) => {
      const answer = await flow.command({ actor, conversation: { channel: 'slack', key: 'C1' }, text });
      return `${answer.level === 'info' ? 'i' : '!'} ${answer.text}`;
    };
    const name = `cmd-${kind}`;

    expect(await say(bob, `assistant create ${name} "Reads files"`)).toBe(
      '! Only approvers can create or change Assistants.',
    );
    expect(await store.getAssistant(name)).toBeNull();
    expect(await say(ada, `assistant create ${name} "Reads files"`)).toMatch(/^i Created the Assistant/);
    expect(await say(bob, `assistant ${name} grant fs.read allow`)).toBe(
      '! Only approvers can create or change Assistants.',
    );
    expect(await say(ada, `assistant ${name} grant fs.nope allow`)).toMatch(/^! There is no tool named "fs\.nope"/);
    expect(await say(ada, `assistant ${name} grant nope allow`)).toMatch(/^! There is no server named "nope"/);
    expect(await say(ada, `assistant ${name} grant fs.read maybe`)).toMatch(/^! Say allow or deny/);
    expect(await say(ada, `assistant ghost grant fs.read allow`)).toMatch(/^! There is no Assistant named "ghost"/);
    expect(await say(ada, `assistant ${name} revoke fs.write`)).toMatch(/^! "cmd-\w+" has no grant for tool fs\.write/);
    expect(await say(ada, `assistant ${name} grant fs.read allow`)).toBe(`i "${name}": allow the tool fs.read.`);

    const shown = await say(bob, `assistant ${name}`);
    expect(shown).toMatch(new RegExp(`^i Assistant ${name}: Reads files`));
    expect(shown).toContain('allow tool fs.read');
    expect(shown).toContain('grant by Ada');
    expect(await say(bob, 'assistants')).toMatch(/^i Assistants/);
    expect(await say(bob, 'assistants')).toContain(`${name}: Reads files (1 grant; default deny)`);
    // Refusals change nothing: the only rows are Ada's create and grant.
    expect((await store.listChanges(name, 10)).map((c) => c.action)).toEqual(['grant', 'create']);
  });

  it("sets an Assistant's model per role only to a model the catalog names, for a role a run has", async () => {
    const models = ['fast', 'thinker'];
    const flow = new AssistantFlow({ assistants: store, tools, clock: () => at(10), approvers: ['slack:U1'], models });
    const say = async (text: string) =>
      (await flow.command({ actor: ada, conversation: { channel: 'slack', key: 'C1' }, text })).text;
    const name = `models-${kind}`;
    await say(`assistant create ${name} "Thinks"`);

    expect(await say(`assistant ${name} model planner thinkr`)).toBe(
      'There is no model named "thinkr" in the model catalog; it has fast, thinker.',
    );
    expect(await say(`assistant ${name} model planer thinker`)).toMatch(/^There is no model role "planer"/);
    expect(await say(`assistant ${name} model planner thinker`)).toBe(`"${name}" uses thinker as its planner model.`);
    expect((await store.getAssistant(name))?.models).toEqual({ planner: 'thinker' });
    expect(await say(`assistant ${name} model planner none`)).toMatch(/uses Steward's own planner model/);

    const bare = new AssistantFlow({ assistants: store, tools, clock: () => at(11), approvers: ['slack:U1'] });
    const text = `assistant ${name} model planner thinker`;
    expect((await bare.command({ actor: ada, conversation: { channel: 'slack', key: 'C1' }, text })).text).toMatch(
      /there is none \(see models\.json\.example\)/,
    );
  });
});

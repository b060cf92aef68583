import { describe, expect, it } from 'vitest';
import { withBuiltinTools } from '../../../src/engine/flows/builtin-tools.ts';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import type { EarlierOutput, ResourceListing, ToolRunner } from '../../../src/engine/ports.ts';
import { STEP_OUTPUT_TOOL } from '../../../src/engine/run/earlier-turns.ts';
import { createEarlyStart, whyNotEarly } from '../../../src/engine/run/early-start.ts';
import { toPlanCard } from '../../../src/engine/run/plan-card.ts';
import { quickTools } from '../../../src/engine/run/quick-tools.ts';
import { READ_RESOURCE_TOOL } from '../../../src/engine/run/resource-tool.ts';
import { policiesFor } from '../../../src/engine/run/step-policies.ts';
import type { Actor, Json, ToolInfo } from '../../../src/engine/types.ts';
import { createPlan, createTool } from '../fixtures.ts';

const alice: Actor = { channel: 'console', id: 'alice', name: 'Alice' };

const mcpTool = (server: string, tool: string): ToolInfo => ({
  name: `${server}.${tool}`,
  server,
  tool,
  description: '',
  inputSchema: { type: 'object' },
  annotations: {},
  policy: { allowed: true, timeoutMs: 1000 },
  fingerprint: 'f',
  definition: {},
});

function setup(found: EarlierOutput | null = null) {
  const sent: string[] = [];
  const asked: [string, number, string][] = [];
  const mcp: ToolRunner = {
    listTools: () => [mcpTool('web', 'fetch')],
    callTool: (name) => {
      sent.push(name);
      return Promise.resolve({ ok: true, value: { content: [{ type: 'text', text: 'from the server' }] } });
    },
  };
  const store = {
    earlierOutput: (runId: string, turn: number, stepId: string) => {
      asked.push([runId, turn, stepId]);
      return Promise.resolve(found);
    },
  };
  return { tools: withBuiltinTools(mcp, store), sent, asked };
}

const options = (runId?: string) => ({ signal: new AbortController().signal, timeoutMs: 1000, runId });
const text = (v: unknown) => JSON.stringify(v);

describe("Steward's built-in tools beside the MCP servers'", () => {
  it('lists steward.step_output after the servers’ tools, read-only and closed-world', () => {
    const { tools } = setup();
    const listed = tools.listTools();
    expect(listed.map((t) => t.name)).toEqual(['web.fetch', STEP_OUTPUT_TOOL]);
    expect(listed[1]?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  });

  it('answers a read from the calling run’s conversation and never sends it to a server', async () => {
    const output: Json = { content: [{ type: 'text', text: 'abcdef' }] };
    const { tools, sent, asked } = setup({ runId: 'before', stepId: 's1', output });
    const outcome = await tools.callTool(
      STEP_OUTPUT_TOOL,
      { turn: 1, step: 's1', offset: 1, length: 2 },
      options('now'),
    );
    expect(outcome).toEqual({
      ok: true,
      value: {
        content: [{ type: 'text', text: 'bc' }],
        structuredContent: { turn: 1, step: 's1', offset: 1, returned: 2, total: 6, nextOffset: 3 },
      },
    });
    expect(asked).toEqual([['now', 1, 's1']]);
    expect(sent).toEqual([]);
  });

  it.each([
    [{ turn: 1, step: 's1' }, undefined, /no run/],
    [{ turn: 'one', step: 's1' }, 'now', /turn must be/],
    [{ turn: 3, step: 's9' }, 'now', /turn 3 of this conversation has no output of step s9/],
  ])('answers %j (run %s) with a tool error that says why', async (args, runId, why) => {
    const { tools, sent } = setup(null);
    const outcome = await tools.callTool(STEP_OUTPUT_TOOL, args, options(runId));
    expect(outcome.ok && outcome.value.isError).toBe(true);
    expect(text(outcome)).toMatch(why);
    expect(sent).toEqual([]);
  });

  it('refuses a steward.* name it does not have, and passes every other call to the servers', async () => {
    const { tools, sent } = setup();
    const made = await tools.callTool('steward.delete_everything', {}, options('now'));
    expect(text(made)).toMatch(/there is no built-in tool steward\.delete_everything/);
    await tools.callTool('web.fetch', {}, options('now'));
    expect(sent).toEqual(['web.fetch']);
  });
});

describe('steward.read_resource, scored as the server it reads from (issue 29)', () => {
  // Two servers with resources: `web`'s tools reach the open world (its resources may hold what they fetched), and
  // its operator set it high risk; `notes` is closed-world. A third, `mine`, connects per person.
  const listing = (server: string, extra: Partial<ResourceListing> = {}): ResourceListing => ({
    server,
    resources: [],
    templates: [],
    more: false,
    ...extra,
  });
  const mcp: ToolRunner = {
    listTools: () => [createTool('web.fetch', { annotations: { readOnlyHint: true, openWorldHint: true } })],
    callTool: () => Promise.resolve({ ok: true, value: { content: [] } }),
    listResources: () => [
      listing('web', { openWorld: true, risk: 'high' }),
      listing('notes'),
      listing('mine', { perPerson: true }),
    ],
    readResource: () => Promise.resolve({ ok: true, value: { content: [] } }),
  };
  const tools = withBuiltinTools(mcp, { earlierOutput: () => Promise.resolve(null) }).listTools();
  const read = (id: string, server: Json, uri: Json = 'x://1', dependsOn: string[] = []) => ({
    id,
    tool: READ_RESOURCE_TOOL,
    args: { server, uri },
    dependsOn,
  });
  const plan = createPlan([
    { id: 'find', tool: 'web.fetch', args: {} },
    read('fromWeb', 'web', { $ref: 'steps.find.output.content[0].text' }, ['find']),
    read('fromNotes', 'notes', { $ref: 'steps.find.output.content[0].text' }, ['find']),
    read('mineRead', 'mine'),
    read('notesNow', 'notes'),
    read('webNow', 'web'),
  ]);

  it("a read from an open-world server is scored as that server's reads: risk, data-flow guard, no early start", () => {
    const validated = validatePlan(plan, tools);
    if (!validated.ok) throw new Error(validated.error.join('; '));
    // The card shows the operator's risk for web, and the plan takes it; a read from notes stays low.
    const card = toPlanCard('r1', 0, validated.value, { needsReview: true, amendmentsLeft: 3, requester: alice });
    expect(card.risk).toBe('high');
    expect(Object.fromEntries(card.steps.map((s) => [s.id, s.risk]))).toMatchObject({
      fromWeb: 'high',
      fromNotes: 'low',
      webNow: 'high',
      notesNow: 'low',
    });
    // A URI an open-world server's output chose, read from an open-world server, waits for a person to see it.
    const policies = policiesFor(plan, tools);
    expect(policies.fromWeb?.guardRefs).toBe(true);
    expect(policies.fromNotes?.guardRefs).toBe(false);
    // Before the plan is whole, only the closed-world read may start.
    const gate = createEarlyStart('risky');
    const step = (id: string) => plan.steps.find((s) => s.id === id)!;
    expect(whyNotEarly(step('notesNow'), gate, tools)).toBeNull();
    expect(whyNotEarly(step('webNow'), gate, tools)).toMatch(/not read-only and closed-world/);
    // Quick answers get the tool only as the most open of its servers: here, not at all.
    expect(quickTools(tools).map((t) => t.name)).not.toContain(READ_RESOURCE_TOOL);
  });

  it('a read from a server that connects per person runs as the requester (the card says so)', () => {
    const validated = validatePlan(plan, tools);
    if (!validated.ok) throw new Error(validated.error.join('; '));
    expect(validated.value.perPerson).toEqual(['mineRead']);
    const card = toPlanCard('r1', 0, validated.value, { needsReview: true, amendmentsLeft: 3, requester: alice });
    expect(card.steps.find((s) => s.id === 'mineRead')).toMatchObject({ as: alice });
    expect(card.steps.find((s) => s.id === 'notesNow')).not.toHaveProperty('as');
    expect(policiesFor(plan, tools).mineRead?.perPerson).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { withBuiltinTools } from '../../../src/engine/flows/builtin-tools.ts';
import type { EarlierOutput, ToolRunner } from '../../../src/engine/ports.ts';
import { STEP_OUTPUT_TOOL } from '../../../src/engine/run/earlier-turns.ts';
import type { Json, ToolInfo } from '../../../src/engine/types.ts';

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

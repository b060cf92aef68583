import { describe, expect, it } from 'vitest';
import { changedDefinition, describeChange, newPins } from '../../../src/engine/plan/tool-pins.ts';
import type { PinnedTool } from '../../../src/engine/ports.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createDefinition, createPlan, createTool } from '../fixtures.ts';

const schemaWithCount = { type: 'object', properties: { text: { type: 'string' }, count: { type: 'number' } } };

describe('what changed in a tool definition since approval', () => {
  it.each<[string, Record<string, Json>, string[]]>([
    ['the title', { title: 'Echo loudly' }, ['title: "Echo" → "Echo loudly"']],
    ['a title removed', { title: null }, ['title: "Echo" → ""']],
    [
      'the description',
      { description: 'Echoes back the input, then emails it.' },
      ['description: "Echoes back the input." → "Echoes back the input, then emails it."'],
    ],
    ['the input schema', { inputSchema: schemaWithCount }, [`inputSchema changed: ${JSON.stringify(schemaWithCount)}`]],
    ['an output schema added', { outputSchema: { type: 'object' } }, ['outputSchema changed: {"type":"object"}']],
    ['an annotation flipped', { annotations: { readOnlyHint: false } }, ['annotation readOnlyHint: true → false']],
    [
      'an annotation added',
      { annotations: { readOnlyHint: true, openWorldHint: true } },
      ['annotation openWorldHint: unset → true'],
    ],
    ['annotations removed', { annotations: null }, ['annotation readOnlyHint: true → unset']],
    [
      'the server version',
      { server: { name: 'everything', version: '1.1.0' } },
      ['server: everything 1.0.0 → everything 1.1.0'],
    ],
    ['the server name', { server: { name: 'other', version: '1.0.0' } }, ['server: everything 1.0.0 → other 1.0.0']],
    [
      'a description that is not text, as JSON',
      { description: { en: 'Echo' } },
      ['description: "Echoes back the input." → "{"en":"Echo"}"'],
    ],
    ['nothing shown (only the name)', { name: 'echo2' }, ['the definition changed']],
  ])('names %s', (_, change, lines) => {
    expect(describeChange(createDefinition(), createDefinition(change))).toEqual(lines);
  });

  it('lists every difference, one line each', () => {
    const after = createDefinition({
      description: 'Deletes files.',
      inputSchema: schemaWithCount,
      annotations: { readOnlyHint: false, destructiveHint: true },
    });
    expect(describeChange(createDefinition(), after)).toEqual([
      'description: "Echoes back the input." → "Deletes files."',
      `inputSchema changed: ${JSON.stringify(schemaWithCount)}`,
      'annotation readOnlyHint: true → false',
      'annotation destructiveHint: unset → true',
    ]);
  });

  it('says the definition changed when neither side is a definition object', () => {
    expect(describeChange(null, 'garbage')).toEqual(['the definition changed']);
  });

  it('cuts long descriptions to 200 characters and long schemas to 300, saying how much was left out', () => {
    const before = createDefinition({ description: 'w'.repeat(230) });
    const description = 'x'.repeat(250);
    const inputSchema = { type: 'object', description: 'y'.repeat(400) };
    const [descLine, schemaLine] = describeChange(before, createDefinition({ description, inputSchema }));
    expect(descLine).toBe(
      `description: "${'w'.repeat(200)}… [30 more characters not shown]" → ` +
        `"${'x'.repeat(200)}… [50 more characters not shown]"`,
    );
    const schemaText = JSON.stringify(inputSchema);
    expect(schemaLine).toBe(
      `inputSchema changed: ${schemaText.slice(0, 300)}… [${schemaText.length - 300} more characters not shown]`,
    );
  });

  // Regression: the fingerprint ignores key order (src/mcp/tool-mapping.ts) but describeChange used not to, so a
  // schema whose keys merely came in another order was shown as changed next to the change that really moved it.
  it('does not report a schema whose keys only come in another order', () => {
    const reordered = { properties: { text: { type: 'string' } }, type: 'object' };
    const after = createDefinition({ inputSchema: reordered, description: 'Now sends mail.' });
    expect(describeChange(createDefinition(), after)).toEqual([
      'description: "Echoes back the input." → "Now sends mail."',
    ]);
  });
});

describe('pinning tool definitions at approval', () => {
  const plan = createPlan([
    { id: 'a', tool: 'srv.read' },
    { id: 'b', tool: 'srv.write' },
    { id: 'c', tool: 'srv.write' },
    { id: 'd', kind: 'llm', args: { prompt: 'sum up' } },
  ]);
  const read = createTool('srv.read', { definition: createDefinition({ name: 'read' }) });
  const write = createTool('srv.write', { definition: createDefinition({ name: 'write' }) });
  const unused = createTool('srv.unused');
  const pinOf = (t: typeof read): PinnedTool => ({
    tool: t.name,
    fingerprint: t.fingerprint,
    definition: t.definition,
  });

  it('pins each tool the plan uses once, with its definition as offered now', () => {
    expect(newPins(plan, [read, write, unused], new Map())).toEqual([pinOf(read), pinOf(write)]);
  });

  it('does not pin again a tool that is already pinned, nor a tool that is not on offer', () => {
    expect(newPins(plan, [write, unused], new Map([['srv.write', pinOf(write)]]))).toEqual([]);
    expect(newPins(plan, [read, write], new Map([['srv.read', pinOf(read)]]))).toEqual([pinOf(write)]);
  });

  it('pins nothing for a plan without tool steps', () => {
    expect(newPins(createPlan([{ id: 'd', kind: 'llm', args: { prompt: 'hi' } }]), [read], new Map())).toEqual([]);
  });

  const pin = pinOf(write);
  const changed = createTool('srv.write', { fingerprint: 'fp-new', definition: createDefinition({ title: 'New' }) });
  it.each<[string, PinnedTool | undefined, ReturnType<typeof createTool>[], ReturnType<typeof createTool> | undefined]>(
    [
      ['no pin', undefined, [changed], undefined],
      ['the tool is gone from the catalog', pin, [read], undefined],
      ['the same fingerprint', pin, [read, write], undefined],
      ['a new fingerprint', pin, [read, changed], changed],
    ],
  )('a step is held for a changed definition only when it changed (%s)', (_, p, tools, expected) => {
    expect(changedDefinition(p, tools)).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import { plannerSystemPrompt } from '../../../src/engine/plan/planner-prompt.ts';
import { compactSchema, DESCRIPTION_BUDGET, renderToolCatalog } from '../../../src/engine/plan/tool-catalog.ts';
import { createTool } from '../fixtures.ts';

// As zod-to-json-schema writes an MCP tool's input: keys a planner has no use for around the ones it needs.
const zodStyle = {
  type: 'object',
  properties: {
    path: { type: 'string', title: 'Path', description: 'File to read' },
    head: { type: 'number', title: 'First lines' },
    options: {
      type: 'object',
      properties: { encoding: { type: 'string', enum: ['utf8', 'latin1'] } },
      additionalProperties: false,
    },
    $schema: { type: 'string', description: 'an argument that happens to be called $schema' },
  },
  required: ['path'],
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
};

describe('the tool catalog the planner reads', () => {
  it('leaves out of a schema only what tells the planner nothing', () => {
    expect(compactSchema(zodStyle, true)).toEqual({
      properties: {
        path: { type: 'string', description: 'File to read' },
        head: { type: 'number', title: 'First lines' },
        options: { type: 'object', properties: { encoding: { type: 'string', enum: ['utf8', 'latin1'] } } },
        $schema: { type: 'string', description: 'an argument that happens to be called $schema' },
      },
      required: ['path'],
    });
  });

  it('keeps what constrains the arguments: open objects, alternatives, references and their definitions', () => {
    const schema = {
      type: 'object',
      properties: {
        tags: { type: 'object', additionalProperties: { type: 'string' } },
        when: { anyOf: [{ type: 'string', format: 'date' }, { $ref: '#/$defs/range' }] },
      },
      $defs: { range: { type: 'object', properties: { from: { type: 'string' } }, additionalProperties: false } },
    };
    expect(compactSchema(schema, true)).toEqual({
      properties: schema.properties,
      $defs: { range: { type: 'object', properties: { from: { type: 'string' } } } },
    });
  });

  it('shows each allowed tool with its risk, its description cut to the budget, and its arguments', () => {
    const read = createTool('fs.read', { description: 'r'.repeat(DESCRIPTION_BUDGET + 50), inputSchema: zodStyle });
    const ping = createTool('net.ping', { description: 'Pings.', inputSchema: { type: 'object', properties: {} } });
    const hidden = createTool('fs.wipe', { policy: { allowed: false, timeoutMs: 1000 } });
    const text = renderToolCatalog([read, hidden, ping]) ?? '';
    expect(text.split('\n')).toEqual([
      `- fs.read (risk low): ${'r'.repeat(DESCRIPTION_BUDGET)}…`,
      `  input schema: ${JSON.stringify(compactSchema(zodStyle, true))}`,
      '- net.ping (risk low): Pings.',
      '  no arguments',
    ]);
    expect(renderToolCatalog([hidden])).toBeUndefined();
  });

  it('puts the catalog last in the system prompt, after instructions that never change', () => {
    const one = plannerSystemPrompt([createTool('fs.read')]);
    const other = plannerSystemPrompt([createTool('web.fetch'), createTool('fs.read')]);
    const common = [...one].findIndex((c, i) => c !== other[i]);
    expect(one.slice(0, common)).toMatch(/Tools:\n- $/);
    expect(plannerSystemPrompt([createTool('fs.read')])).toBe(one);
  });
});

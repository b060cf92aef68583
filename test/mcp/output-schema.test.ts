/**
 * Output schemas (issue 29): a tool's `outputSchema` reaches the engine's catalog, a plan's reference into
 * `structuredContent` is checked against it before anything runs, and an answer that breaks it fails its step with
 * the schema's own error. Real server-everything (`get-structured-content`) for the first two; a fixture that breaks
 * its schema for the last, since no reference server does.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { renderToolCatalog } from '../../src/engine/plan/tool-catalog.ts';
import { validatePlan } from '../../src/engine/plan/validate-plan.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { everythingStdioConfig, mcpConfig, serverConfig } from '../helpers/mcp-servers.ts';

const BROKEN = join(import.meta.dirname, '../fixtures/broken-output-server.mjs');
let host: McpHost;
const signal = () => new AbortController().signal;

beforeAll(async () => {
  const broken = serverConfig('broken', { command: process.execPath, args: [BROKEN] });
  const connected = await McpHost.connect(mcpConfig(everythingStdioConfig(), broken));
  expect(connected.failures).toEqual([]);
  host = connected.host;
});

afterAll(async () => {
  await host?.close();
});

const weatherThenEcho = (field: string) =>
  planSchema.parse({
    summary: 'weather, then say it',
    needsTools: true,
    steps: [
      { id: 'w', tool: 'everything.get-structured-content', args: { location: 'Chicago' } },
      {
        id: 'say',
        tool: 'everything.echo',
        args: { message: { $ref: `steps.w.output.structuredContent.${field}` } },
        dependsOn: ['w'],
      },
    ],
  });

describe("server-everything's get-structured-content", () => {
  it('shows the planner the shape of its structuredContent in the catalog', () => {
    const tool = host.listTools().find((t) => t.name === 'everything.get-structured-content');
    expect(tool?.outputSchema).toMatchObject({ properties: { temperature: { type: 'number' } } });
    const catalog = renderToolCatalog([tool!]) ?? '';
    expect(catalog).toContain('\n  structuredContent: {temperature: number, conditions: string, humidity: number}');
  });

  it('refuses a plan whose reference names a field the schema does not have, and passes the right one', () => {
    const refused = validatePlan(weatherThenEcho('condition'), host.listTools());
    expect(refused).toEqual({
      ok: false,
      error: [
        'step say: argument message reads steps.w.output.structuredContent.condition, but ' +
          "everything.get-structured-content's structuredContent.condition cannot exist: the tool's output schema " +
          'has no "condition" there; it has "temperature", "conditions", "humidity"',
      ],
    });
    expect(validatePlan(weatherThenEcho('conditions'), host.listTools()).ok).toBe(true);
  });

  it('answers with structuredContent that matches its schema', async () => {
    const outcome = await host.callTool(
      'everything.get-structured-content',
      { location: 'Chicago' },
      { signal: signal(), timeoutMs: 5000 },
    );
    expect(outcome).toMatchObject({ ok: true, value: { structuredContent: { conditions: 'Light rain / drizzle' } } });
  });
});

describe('a server whose answer breaks its own output schema (listed one tool per page)', () => {
  it("fails the call with the schema's error, saying the tool ran, on a tool of the listing's first page", async () => {
    const outcome = await host.callTool('broken.weather', {}, { signal: signal(), timeoutMs: 5000 });
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: 'tool_error',
        message:
          "broken.weather ran, but its structuredContent breaks the tool's output schema: data/temperature must be number; its answer was not used.",
        retryable: false,
      },
    });
  });

  it('fails a call that declares a schema and answers without structuredContent (the SDK checks the last page)', async () => {
    const outcome = await host.callTool('broken.silent', {}, { signal: signal(), timeoutMs: 5000 });
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: 'tool_error',
        message:
          'broken.silent ran, but the tool declares an output schema and its answer has no structuredContent; its answer was not used.',
      },
    });
  });

  it('passes an answer that keeps to its schema', async () => {
    const outcome = await host.callTool('broken.fine', {}, { signal: signal(), timeoutMs: 5000 });
    expect(outcome).toMatchObject({ ok: true, value: { structuredContent: { temperature: 31, conditions: 'sunny' } } });
  });
});

/**
 * Output schemas through the real entry point (issue 29): the planner sees server-everything's structuredContent
 * schema, a plan that reads a field the schema does not have is refused before anything runs (the planner gets the
 * exact reason and repairs it), and the repaired plan reads the real field.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const plan = (field: string) =>
  planReply([
    { id: 'w', tool: 'everything.get-structured-content', args: { location: 'Chicago' } },
    {
      id: 'say',
      tool: 'everything.echo',
      args: { message: { $ref: `steps.w.output.structuredContent.${field}` } },
      dependsOn: ['w'],
    },
  ]);

describe('console, structured output (postgres)', () => {
  it('refuses a reference to a field the output schema lacks before any call, then runs the repaired plan', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan('weather'), plan('conditions')], synthesizer: ['It drizzles in Chicago.'] }),
    });
    await h.type('what is the weather in Chicago? say it back');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    const planner = h.llm.requests.filter((r) => r.role === 'planner');
    expect(planner).toHaveLength(2);
    expect(JSON.stringify(planner[0]!.body)).toContain(
      'structuredContent: {temperature: number, conditions: string, humidity: number}',
    );
    expect(planner[1]!.lastUserText).toContain(
      "step say: argument message reads steps.w.output.structuredContent.weather, but everything.get-structured-content's structuredContent.weather cannot exist",
    );
    expect(h.calls.map((c) => [c.name, c.args])).toEqual([
      ['everything.get-structured-content', { location: 'Chicago' }],
      ['everything.echo', { message: 'Light rain / drizzle' }],
    ]);
  });
});

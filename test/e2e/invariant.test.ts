import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { CANARY_KEY, planReply, startHarness } from './harness.ts';

describe('the control-flow invariant checked after every end-to-end test', () => {
  it('fails a test in which an MCP call does not match a step of an approved plan', async () => {
    const h = await startHarness({
      db: 'pglite',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [planReply([{ id: 'e', tool: 'everything.echo', args: { message: 'planned' } }])],
        synthesizer: ['ok'],
      }),
    });
    await h.type('echo');
    await h.waitFor(/=== Report \(completed\) ===/);
    // A tool output saying "now call X" must never become a call: if one did, it would look like this.
    h.calls.push({ name: 'everything.echo', args: { message: 'injected' }, at: Date.now() });
    await expect(h.close()).rejects.toThrow(
      'MCP calls outside an approved plan, or leaked secrets:\neverything.echo {"message":"injected"}',
    );
  });
});

describe('secrets stay out of tools, prompts, the database and the chat', () => {
  it('an MCP server sees none of the bot’s secrets in its environment, and a leak would fail the test', async () => {
    const plan = planReply([{ id: 'env', tool: 'everything.get-env', args: {} }]);
    const h = await startHarness({
      db: 'pglite',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Here is the environment.'] }),
    });
    await h.type('show me the server environment');
    await h.waitFor(/=== Report \(completed\) ===/);
    const [row] = await h.db.db.selectFrom('step_attempts').select('output').execute();
    expect(JSON.stringify(row!.output)).toContain('PATH');
    expect(JSON.stringify(row!.output)).not.toContain(CANARY_KEY);
    await h.close();
  });

  it('the canary check catches a key that reaches the console', async () => {
    const h = await startHarness({
      db: 'pglite',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [JSON.stringify({ summary: 's', needsTools: false, answer: `your key is ${CANARY_KEY}` })],
      }),
    });
    await h.type('what is my key?');
    await h.waitFor(/your key is/);
    await expect(h.close()).rejects.toThrow('what people were shown, or a log line, holds the LLM key');
  });
});

import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness } from './harness.ts';

describe('the control-flow invariant checked after every end-to-end test', () => {
  it('fails a test in which an MCP call does not match a step of an approved plan', async () => {
    const h = await startHarness({ db: 'pglite', servers: [everythingStdioConfig()], script: byRole({ planner: [planReply([{ id: 'e', tool: 'everything.echo', args: { message: 'planned' } }])], synthesizer: ['ok'] }) });
    await h.type('echo');
    await h.waitFor(/=== Report \(completed\) ===/);
    // A tool output saying "now call X" must never become a call: if one did, it would look like this.
    h.calls.push({ name: 'everything.echo', args: { message: 'injected' }, at: Date.now() });
    await expect(h.close()).rejects.toThrow('MCP calls outside an approved plan:\neverything.echo {"message":"injected"}');
  });
});

/**
 * Model failures said plainly: the real engine and openai SDK against the fake LLM server answering 401, 429 or 500,
 * never answering, or gone. The person reads what happened (not "I could not make a valid plan"), the log gets the
 * reason, and neither holds the key (the harness checks every printed and logged line for it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole, type FakeReply } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const cases: { what: string; reply: FakeReply; shown: RegExp }[] = [
  { what: 'refuses the key (401)', reply: { status: 401 }, shown: /refused the API key \(HTTP 401\)/ },
  { what: 'rate-limits (429)', reply: { status: 429 }, shown: /is rate-limiting requests \(HTTP 429\)/ },
  { what: 'fails (500)', reply: { status: 500 }, shown: /failed \(HTTP 500\): fake error 500/ },
  { what: 'never answers', reply: { hang: true }, shown: /timed out: it did not answer within 0\.3 s/ },
];

describe('console, model failures said plainly (postgres)', () => {
  it.each(cases)('a planner that $what: the person reads why, and the log has the reason', async ({ reply, shown }) => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [reply] }),
      llmTimeoutMs: 300,
    });
    await h.type('echo hello');
    const line = await h.waitFor(/✖ I could not plan this request: the model failed: [^\n]*/);
    expect(line).toMatch(shown);
    expect(line).toContain('127.0.0.1');
    expect(h.output()).not.toContain('valid plan');
    const logged = h.logs.find((l) => l.startsWith('warn model call failed (planner, openai:planner-model): '));
    expect(logged).toMatch(shown);
    expect((await h.store.getRun((await onlyRun(h)).id))!.status).toBe('failed');
    expect(h.calls).toEqual([]);
  });

  it('a model server that is gone: "could not reach … (connection refused)", on the screen and in the log', async () => {
    h = await startHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({}) });
    await h.llm.close();
    await h.type('echo hello');
    const line = await h.waitFor(/✖ I could not plan this request: [^\n]*/);
    expect(line).toMatch(
      /^✖ I could not plan this request: the model failed: could not reach the OpenAI-compatible server at 127\.0\.0\.1:\d+ \(connection refused\)$/,
    );
    expect(h.logs.some((l) => /^warn model call failed \(planner.*\(connection refused\)/.test(l))).toBe(true);
  });

  it('an answer that is not a plan is still called that: the model answered, so the plan is what failed', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: ['no plan here', 'still none', 'nope'] }),
    });
    await h.type('echo hello');
    await h.waitFor(/✖ I could not make a valid plan: the answer is not a JSON object/);
    expect(h.output()).not.toContain('could not plan this request');
  });

  it('a report writer that fails: the plain report says why', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({
        planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }])],
        synthesizer: [{ status: 503 }],
      }),
    });
    await h.type('echo hi');
    const report = await h.waitFor(/=== Report \(completed\) ===\n[^\n]*/);
    expect(report).toMatch(
      /\nRun completed\. \(The report writer failed \(the model failed: the OpenAI-compatible server at 127\.0\.0\.1:\d+ failed \(HTTP 503\): fake error 503\), so here are the step results\.\)$/,
    );
    await h.waitFor(/say \(everything\.echo[^)]*\): SUCCEEDED — Echo: hi/);
    expect(h.logs.some((l) => l.startsWith('warn model call failed (synthesizer, openai:synth-model): '))).toBe(true);
  });
});

/**
 * The model check at start (`RoutedLlmClient.probe`): one model-list request per configured server through the real
 * SDKs, against the fake; a failure is a warning that says why and which roles it serves, and goes to the log.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmSettings } from '../../src/llm/model-router.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.setModelList('list');
});

const KEY = 'sk-probe-canary-123456';

function probed(baseURL: string, models: Partial<LlmSettings['models']> = {}) {
  const logs: string[] = [];
  const client = createLlmClient(
    {
      openai: { apiKey: KEY, baseURL, maxRetries: 0 },
      anthropic: { apiKey: KEY, baseURL: fake.anthropicBaseURL, maxRetries: 0 },
      models: { planner: 'openai:p', classifier: 'openai:p', synthesizer: 'openai:p', llm_step: 'openai:p', ...models },
    },
    (level, message) => logs.push(`${level} ${message}`),
  );
  return { client, logs };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the model check at start', () => {
  it('a server that answers: no warning, one request per server (roles sharing a model share it)', async () => {
    const { client, logs } = probed(fake.baseURL, { synthesizer: 'anthropic:s' });
    expect(await client.probe(2_000)).toEqual([]);
    expect(fake.modelListRequests()).toBe(2);
    expect(logs).toEqual([]);
  });

  it('a refused key: the warning names the roles, the model and HTTP 401, and is logged; the key is in neither', async () => {
    fake.setModelList({ status: 401 });
    const { client, logs } = probed(fake.baseURL);
    const warnings = await client.probe(2_000);
    const host = new URL(fake.baseURL).host;
    expect(warnings).toEqual([
      `The model for planner, classifier, synthesizer, llm_step, butler (openai:p) did not answer a check at start: The OpenAI-compatible server at ${host} refused the API key (HTTP 401).`,
    ]);
    expect(logs).toEqual([`warn ${warnings[0]}`]);
    expect(JSON.stringify([warnings, logs])).not.toContain(KEY);
  });

  it('a server that never answers: timed out within the probe time, not the call timeout', async () => {
    fake.setModelList({ hang: true });
    const { client } = probed(fake.baseURL);
    const started = Date.now();
    const [warning] = await client.probe(300);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(warning).toMatch(/Model p at 127\.0\.0\.1:\d+ timed out: it did not answer within 0\.3 s\.$/);
  });

  it('nothing listening: "could not reach … (connection refused)"', async () => {
    const port = await closedPort();
    const { client } = probed(`http://127.0.0.1:${port}/v1`);
    const [warning] = await client.probe(2_000);
    expect(warning).toMatch(
      /Could not reach the OpenAI-compatible server at 127\.0\.0\.1:\d+ \(connection refused\)\.$/,
    );
  });

  it('a model the server does not list: the warning names the roles, the model and what it lists (issue 33)', async () => {
    fake.setModelList({ ids: ['llama3.1:latest', 'qwen3:8b'] });
    const { client, logs } = probed(fake.baseURL, { planner: 'openai:gpt-4.1', synthesizer: 'openai:gpt-4.1' });
    const warnings = await client.probe(2_000);
    const host = new URL(fake.baseURL).host;
    expect(warnings).toEqual([
      `The model for planner, synthesizer (openai:gpt-4.1) is not among the models the OpenAI-compatible server at ${host} lists (llama3.1:latest, qwen3:8b): requests for it will fail until the server has it, or another is named (STEWARD_MODEL, a STEWARD_MODEL_* variable or the model catalog).`,
      `The model for classifier, llm_step, butler (openai:p) is not among the models the OpenAI-compatible server at ${host} lists (llama3.1:latest, qwen3:8b): requests for it will fail until the server has it, or another is named (STEWARD_MODEL, a STEWARD_MODEL_* variable or the model catalog).`,
    ]);
    expect(logs).toEqual(warnings.map((w) => `warn ${w}`));
  });

  it("a listed model passes, Ollama's name without :latest included, and an empty list checks nothing", async () => {
    fake.setModelList({ ids: ['llama3.1:latest', 'p'] });
    expect(await probed(fake.baseURL, { planner: 'openai:llama3.1' }).client.probe(2_000)).toEqual([]);
    fake.setModelList({ ids: [] });
    expect(await probed(fake.baseURL, { planner: 'openai:anything' }).client.probe(2_000)).toEqual([]);
  });
});

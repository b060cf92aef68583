/**
 * The planner's system prompt as Anthropic receives it: a long one cut at line ends into blocks, each marked for the
 * prompt cache, so two prompts whose tool catalogs differ only further on send the same first blocks (the prefix
 * Anthropic can read back); a short one stays one marked block.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { plannerSystemPrompt, plannerUserPrompt } from '../../src/engine/plan/planner-prompt.ts';
import { AnthropicLlmClient } from '../../src/llm/anthropic-llm.ts';
import { CUT_CHARS, systemBlocks } from '../../src/llm/anthropic-cache.ts';
import { createTool } from '../engine/fixtures.ts';
import { startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

/** Tools whose catalog entries run to about 300 characters each. */
function tools(names: readonly string[]) {
  return names.map((n) =>
    createTool(`srv.${n}`, { description: `Does ${n} to the files it is given, carefully. `.repeat(4) }),
  );
}

type Block = { type: string; text: string; cache_control?: { type: string } };

describe('the system prompt in blocks for the Anthropic cache', () => {
  it('sends a long planner prompt as marked blocks cut at line ends, the same head for catalogs that differ later', async () => {
    const client = new AnthropicLlmClient({
      apiKey: 'k',
      baseURL: fake.anthropicBaseURL,
      model: 'claude-test',
      maxRetries: 0,
    });
    fake.setScript(() => '{"answer":"ok"}');
    const shared = Array.from({ length: 24 }, (_, i) => `tool_${String(i).padStart(2, '0')}`);
    const prompts = [
      plannerSystemPrompt(tools([...shared, 'zip_a', 'zip_b'])),
      plannerSystemPrompt(tools([...shared, 'unzip_c'])),
    ];
    for (const system of prompts) {
      const messages = [{ role: 'user' as const, content: plannerUserPrompt({ request: 'go', tools: [] }) }];
      await client.complete({ role: 'planner', system, messages });
    }

    const sent = fake.requests.map((r) => r.body['system'] as Block[]);
    for (const [i, blocks] of sent.entries()) {
      expect(blocks.length).toBe(3);
      expect(blocks.map((b) => b.text).join('')).toBe(prompts[i]);
      for (const b of blocks) expect(b.cache_control).toEqual({ type: 'ephemeral' });
      expect(blocks.slice(0, -1).every((b) => b.text.endsWith('\n'))).toBe(true);
    }
    // The catalogs part after the shared tools, past both cuts: the first two blocks are the same.
    expect(sent[1]!.slice(0, 2)).toEqual(sent[0]!.slice(0, 2));
    expect(sent[1]![2]).not.toEqual(sent[0]![2]);
    expect(fake.requests.map((r) => r.system)).toEqual(prompts);
    expect(fake.failures).toEqual([]);
  });

  it('keeps a prompt shorter than the first cut as one marked block', () => {
    const system = plannerSystemPrompt(tools(['one', 'two']));
    expect(system.length).toBeLessThan(CUT_CHARS[0]);
    expect(systemBlocks(system)).toEqual([{ text: system, cache: true }]);
  });

  it('cuts at the first line end past each mark, and not where nothing would follow', () => {
    const line = `${'x'.repeat(99)}\n`;
    const blocks = systemBlocks(line.repeat(70));
    expect(blocks.map((b) => b.text.length)).toEqual([4100, 2100, 800]);
    // A prompt ending right at a cut's line end keeps that text in its last block.
    expect(systemBlocks(line.repeat(41)).map((b) => b.text.length)).toEqual([4100]);
  });
});

import { describe, expect, it } from 'vitest';
import { AnthropicPromptCache, CACHE_TTL_MS, OpenAiPromptCache } from '../../bench/prompt-cache-model.ts';
import { requestTokens } from '../../bench/peer-model.ts';

/** `n` tokens of text as the fake counts them (4 characters each), made of lines of 100 characters. */
function text(n: number, fill = 'a'): string {
  const chars = n * 4;
  const line = `${fill.repeat(99)}\n`;
  return line.repeat(Math.floor(chars / 100)) + fill.repeat(chars % 100);
}

const body = (system: string, user: string) => ({
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ],
});

describe("the fake's OpenAI prompt cache", () => {
  it('reads the longest prefix shared with an earlier prompt, in 128-token steps from 1,024, within its lifetime', () => {
    const cache = new OpenAiPromptCache();
    const shared = text(1500);
    expect(cache.read(body(shared, 'first request'), 0)).toBe(0);
    // 1,500 shared tokens and then the prompts part: 1,408 (11 × 128) are read.
    expect(cache.read(body(shared, 'second request'), 1000)).toBe(1408);
    // Both entries last used at 1,000 have expired; the third prompt is cached anew for the fourth.
    expect(cache.read(body(shared, 'third request'), 1000 + CACHE_TTL_MS + 1)).toBe(0);
    const fourth = body(shared, 'fourth request');
    expect(cache.read(fourth, 1000 + CACHE_TTL_MS + 2)).toBe(1408);
    expect(requestTokens(fourth)).toBeGreaterThan(1408);
  });

  it('reads nothing below 1,024 shared tokens, nor for a prompt under 1,024 tokens', () => {
    const cache = new OpenAiPromptCache();
    cache.read(body(text(1000), 'x'.repeat(400)), 0);
    expect(cache.read(body(text(1000), 'y'.repeat(400)), 1)).toBe(0);
    cache.read(body(text(900), ''), 2);
    expect(cache.read(body(text(900), ''), 3)).toBe(0);
  });

  it('puts the tools and the response schema before the messages', () => {
    const cache = new OpenAiPromptCache();
    const tools = [{ type: 'function', function: { name: 't', description: text(1200) } }];
    cache.read({ tools, messages: [{ role: 'user', content: 'a' }] }, 0);
    expect(cache.read({ tools, messages: [{ role: 'user', content: 'b' }] }, 1)).toBe(1152);
  });
});

describe("Anthropic's rule on the same prompts", () => {
  const head = text(1200, 'h');
  it('with one block, reads only a whole system prompt seen before, and only from its minimum on', () => {
    const single = new AnthropicPromptCache('single', 1024);
    expect(single.read(body(head + text(300, 'p'), 'one'), 0)).toEqual({ read: 0, written: 1500 });
    // The same system prompt: all of it; another tail: nothing, though 1,200 tokens are shared.
    expect(single.read(body(head + text(300, 'p'), 'two'), 1)).toEqual({ read: 1500, written: 0 });
    expect(single.read(body(head + text(300, 'q'), 'three'), 2)).toEqual({ read: 0, written: 1500 });
    const haiku = new AnthropicPromptCache('single', 4096);
    haiku.read(body(head + text(300, 'p'), 'one'), 0);
    expect(haiku.read(body(head + text(300, 'p'), 'two'), 1)).toEqual({ read: 0, written: 0 });
  });

  it('with the system prompt cut at line ends, reads the shared head when the tails differ', () => {
    const split = new AnthropicPromptCache('split', 1024);
    expect(split.read(body(head + text(300, 'p'), 'one'), 0)).toEqual({ read: 0, written: 1500 });
    // The first cut is the line end past 4,096 characters: 4,100 characters, 1,025 tokens; the rest is written.
    expect(split.read(body(head + text(300, 'q'), 'two'), 1)).toEqual({ read: 1025, written: 475 });
  });
});

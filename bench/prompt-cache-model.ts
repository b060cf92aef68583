/**
 * The providers' prompt caches, simulated on the request bodies the fake model receives (pure but for the caches'
 * own state). Tokens are the fake's: a quarter of the characters (`countTokens`), of the same parts `requestTokens`
 * counts, so a cached count is always within the input count.
 *
 * OpenAI (https://developers.openai.com/api/docs/guides/prompt-caching): automatic for prompts of 1,024 tokens or
 * more; a request reads the longest prefix it shares with a recent request, in 128-token increments from 1,024 on;
 * the prefix is the whole prompt in order, tools and the structured-output schema (a prefix to the system message)
 * before the messages; entries stay 5 to 10 minutes after their last use. Modelled as the longest common prefix with
 * any earlier request of the last `ttlMs` (as if every request met the machine that holds it, the best case OpenAI's
 * routing by prefix hash aims at).
 *
 * Anthropic (https://platform.claude.com/docs/en/build-with-claude/prompt-caching): only up to a block marked
 * `cache_control` (at most 4), in the order tools, system, messages; an entry is written at a marked block when the
 * prefix up to it is at least the model's minimum (1,024 tokens for Sonnet 4.5/4.6 and Opus 4.1, 4,096 for Haiku 4.5
 * and Opus 4.5/4.6), and read when a later request's prefix up to a marked block, or up to any of the 20 block
 * boundaries before it, is identical; 5 minutes, refreshed on each read. Steward's Anthropic client marks only the
 * system prompt (one block, or the blocks of `systemBlocks`); the planner's schema goes in `output_config`, not in
 * the prefix's blocks, so it is counted here as part of no block, only as a key (it is the same on every call).
 */
import { createHash } from 'node:crypto';
import { systemBlocks } from '../src/llm/anthropic-cache.ts';
import { countTokens } from './latency-model.ts';
import { wireText, type WireMessage } from './peer-model.ts';

/** OpenAI's rule. */
export const OPENAI_MIN_TOKENS = 1024;
export const OPENAI_INCREMENT = 128;
/** How long an unused entry lives in both simulations (both providers say 5 minutes or more). */
export const CACHE_TTL_MS = 5 * 60_000;
/** Anthropic's minimums, by model family: Sonnet 4.5/4.6 and Opus 4.1; Haiku 4.5 and Opus 4.5/4.6. */
export const ANTHROPIC_MINIMUMS = [1024, 4096] as const;
const LOOKBACK_BLOCKS = 20;

/** A request body's parts in the order a provider reads them: tools, the response schema, then each message. */
export function promptParts(body: Record<string, unknown>): { tools: string[]; schema: string; messages: string[] } {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as unknown[]).map((t) => JSON.stringify(t)) : [];
  const schema = body['response_format'] ? JSON.stringify(body['response_format']) : '';
  const messages = Array.isArray(body['messages']) ? (body['messages'] as WireMessage[]) : [];
  return {
    tools,
    schema,
    messages: messages.map((m) => wireText(m.content) + (m.tool_calls ? JSON.stringify(m.tool_calls) : '')),
  };
}

/** Tokens of a prefix of `chars` characters: whole tokens only. */
function prefixTokens(chars: number): number {
  return Math.floor(chars / 4);
}

/** OpenAI's automatic cache: the longest prefix shared with a recent request, in 128-token steps from 1,024. */
export class OpenAiPromptCache {
  private readonly entries: { text: string; usedAt: number }[] = [];

  /** Tokens of `body` read from the cache; the prompt is then cached too. */
  read(body: Record<string, unknown>, now: number): number {
    const p = promptParts(body);
    const text = [...p.tools, p.schema, ...p.messages].join('');
    let best = 0;
    let bestEntry: { usedAt: number } | undefined;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (now - e.usedAt > CACHE_TTL_MS) {
        this.entries.splice(i, 1);
        continue;
      }
      const n = commonPrefix(text, e.text);
      if (n > best) [best, bestEntry] = [n, e];
    }
    if (bestEntry) bestEntry.usedAt = now;
    const same = this.entries.find((e) => e.text === text);
    if (same) same.usedAt = now;
    else this.entries.push({ text, usedAt: now });
    if (countTokens(text) < OPENAI_MIN_TOKENS) return 0;
    const tokens = Math.floor(prefixTokens(best) / OPENAI_INCREMENT) * OPENAI_INCREMENT;
    return tokens >= OPENAI_MIN_TOKENS ? tokens : 0;
  }
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** How Steward's Anthropic client lays out the system prompt: one marked block (before), or `systemBlocks` (after). */
export type AnthropicLayout = 'single' | 'split';

interface Block {
  text: string;
  marked: boolean;
}

/** The request's blocks as the Anthropic client would send them: each tool, the system blocks, each message. */
export function anthropicBlocks(body: Record<string, unknown>, layout: AnthropicLayout): Block[] {
  const p = promptParts(body);
  const raw = Array.isArray(body['messages']) ? (body['messages'] as WireMessage[]) : [];
  const system = raw
    .filter((m) => m.role === 'system')
    .map((m) => wireText(m.content))
    .join('');
  const rest = p.messages.filter((_, i) => raw[i]?.role !== 'system');
  const sys =
    layout === 'single'
      ? [{ text: system, marked: true }]
      : systemBlocks(system).map((b) => ({ text: b.text, marked: b.cache }));
  return [
    ...p.tools.map((text) => ({ text, marked: false })),
    ...(system ? sys : []),
    ...rest.map((text) => ({ text, marked: false })),
  ];
}

/** Anthropic's cache for one layout and one model minimum. */
export class AnthropicPromptCache {
  private readonly entries = new Map<string, number>();

  constructor(
    readonly layout: AnthropicLayout,
    readonly minTokens: number,
  ) {}

  /**
   * Tokens of `body` read from the cache, and written to it: entries are written at its marked blocks (long enough,
   * not already there), billed from the end of what was read to the last block written.
   */
  read(body: Record<string, unknown>, now: number): { read: number; written: number } {
    for (const [key, usedAt] of this.entries) if (now - usedAt > CACHE_TTL_MS) this.entries.delete(key);
    const blocks = anthropicBlocks(body, this.layout);
    // The key and length of the prefix ending with each block; the schema keys them all, counting no tokens.
    const hash = createHash('sha256').update(promptParts(body).schema);
    const keys: string[] = [];
    const chars: number[] = [];
    let total = 0;
    for (const b of blocks) {
      hash.update(`\u0000${b.text}`);
      keys.push(hash.copy().digest('hex'));
      total += b.text.length;
      chars.push(total);
    }
    let hit = -1;
    blocks.forEach((b, i) => {
      if (!b.marked) return;
      for (let j = i; j >= Math.max(0, i - LOOKBACK_BLOCKS); j--) {
        if (this.entries.has(keys[j]!)) {
          hit = Math.max(hit, j);
          break;
        }
      }
    });
    if (hit >= 0) this.entries.set(keys[hit]!, now);
    const read = hit >= 0 ? prefixTokens(chars[hit]!) : 0;
    let writtenTo = 0;
    blocks.forEach((b, i) => {
      if (!b.marked || prefixTokens(chars[i]!) < this.minTokens) return;
      if (!this.entries.has(keys[i]!)) writtenTo = prefixTokens(chars[i]!);
      this.entries.set(keys[i]!, now);
    });
    return { read, written: Math.max(0, writtenTo - read) };
  }
}

/** What the fake reports per request when caching is on: OpenAI's reading, and Anthropic's per layout and minimum. */
export interface CacheReading {
  /** OpenAI's rule: what the fake reports in usage and charges no prefill for. */
  cachedTokens: number;
  /** Anthropic's rule, `${layout}-${minimum}` → tokens read. */
  anthropic: Record<string, number>;
  /** Anthropic's rule, `${layout}-${minimum}` → tokens written to the cache (billed at 1.25 times the input price). */
  anthropicWritten: Record<string, number>;
}

/** Every simulated cache of one fake model process. */
export class PromptCaches {
  private readonly openai = new OpenAiPromptCache();
  private readonly anthropic = (['single', 'split'] as const).flatMap((layout) =>
    ANTHROPIC_MINIMUMS.map((min) => new AnthropicPromptCache(layout, min)),
  );

  read(body: Record<string, unknown>, now: number): CacheReading {
    const readings = this.anthropic.map((c) => [`${c.layout}-${c.minTokens}`, c.read(body, now)] as const);
    return {
      cachedTokens: this.openai.read(body, now),
      anthropic: Object.fromEntries(readings.map(([k, r]) => [k, r.read])),
      anthropicWritten: Object.fromEntries(readings.map(([k, r]) => [k, r.written])),
    };
  }
}

/**
 * Where a system prompt is cut into blocks for Anthropic's prompt cache (pure).
 *
 * Anthropic caches the prompt (tools, then system, then messages) up to a block marked `cache_control`, and a later
 * request reads it only when everything up to that block is identical and at least the model's minimum long (1,024
 * tokens for Sonnet 4.5/4.6 and Opus 4.1, 4,096 for Haiku 4.5 and Opus 4.5/4.6); at most 4 blocks may be marked, and
 * a marked block also finds an entry written at any of the 20 block boundaries before it
 * (https://platform.claude.com/docs/en/build-with-claude/prompt-caching). One marked block for the whole system
 * prompt caches nothing when only its end differs, as the planner's does whenever the tool selection differs
 * (tool-selection.ts offers at most 24 of a larger catalog, by request). So a long system prompt is also cut at the
 * first line end past each of `CUT_CHARS`, each piece marked: two prompts identical up to a cut are cut there alike
 * (the cut depends only on the text before it), so the shared head is cached even when the tails differ.
 */

/** One block of the system prompt, and whether it ends at a cache breakpoint. */
export interface SystemBlock {
  text: string;
  cache: boolean;
}

/**
 * Where the intermediate cuts go: past 4,096 and 6,144 characters, about 1,024 and 1,536 tokens at four characters
 * a token, so the first is near the smallest minimum and the second still inside the head that planner prompts of
 * the bench's task mix share (bench section 12 measures them; a cut at 8,192 served less). Should Claude count fewer
 * tokens there, a cut under the model's minimum is simply not written (no charge, no error) and the later ones still
 * are. Two, so that with the block at the end of the system prompt one of the 4 breakpoints stays free.
 */
export const CUT_CHARS = [4096, 6144] as const;

/** The system prompt as marked blocks: cut at the first line end past each of `CUT_CHARS`, every block marked. */
export function systemBlocks(system: string): SystemBlock[] {
  const blocks: SystemBlock[] = [];
  let start = 0;
  for (const at of CUT_CHARS) {
    if (at <= start) continue;
    const end = system.indexOf('\n', at);
    // A cut with nothing after it would only repeat the last block's breakpoint.
    if (end < 0 || end + 1 >= system.length) break;
    blocks.push({ text: system.slice(start, end + 1), cache: true });
    start = end + 1;
  }
  blocks.push({ text: system.slice(start), cache: true });
  return blocks;
}

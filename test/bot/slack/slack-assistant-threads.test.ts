import { describe, expect, it } from 'vitest';
import { MAX_PROMPTS, PROMPT_TITLE_MAX, suggestedPrompts } from '../../../src/bot/slack/slack-assistant-threads.ts';

const workflow = (name: string) => ({ name, version: 1, review: 'saved' as const, schedules: [] });

describe('suggested prompts', () => {
  it("never more than Slack's four: workflows and Assistants take turns, long names are cut", () => {
    const long = 'x'.repeat(200);
    const prompts = suggestedPrompts(['a', 'b', 'c', long].map(workflow), ['ops', 'hr', 'legal']);
    expect(prompts).toHaveLength(MAX_PROMPTS);
    expect(prompts.map((p) => p.title)).toEqual(['Run workflow a', 'Ask ops', 'Run workflow b', 'Ask hr']);
    const cut = suggestedPrompts([workflow(long)], [])[0]!;
    expect(cut.title.length).toBeLessThanOrEqual(PROMPT_TITLE_MAX);
    expect(cut.message).toBe(`workflow ${long} run`);
    expect(suggestedPrompts([], ['ops', 'hr', 'legal', 'it', 'sales']).map((p) => p.title)).toHaveLength(4);
  });
});

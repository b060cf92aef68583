import { describe, expect, it } from 'vitest';
import { MAX_PLAN_DEPTH, TOO_DEEP } from '../../../src/engine/plan/json-depth.ts';
import { checkAnswer, extractJson, plannerSystemPrompt } from '../../../src/engine/plan/planner-prompt.ts';
import { createTool } from '../fixtures.ts';

const tools = [createTool('srv.read')];

/** A planner answer whose one step has an argument nested so that the whole plan is `depth` levels deep. */
function answerOfDepth(depth: number): string {
  // The plan object, its steps array, the step and its args are four levels; the argument's value adds the rest.
  const inner = depth - 4;
  const text = `${'['.repeat(inner)}"x"${']'.repeat(inner)}`;
  return `{"summary":"read","needsTools":true,"steps":[{"id":"a","tool":"srv.read","args":{"deep":${text}}}]}`;
}

describe("the depth of the planner's answer", () => {
  it('a plan nested 10,000 deep is refused with a rule the planner can follow, not a stack overflow', () => {
    expect(checkAnswer(answerOfDepth(10_000), tools)).toEqual({ ok: false, error: TOO_DEEP });
    expect(TOO_DEEP).toBe(
      `the plan nests objects and arrays more than ${MAX_PLAN_DEPTH} levels deep; write a flatter plan`,
    );
  });

  it('is checked on the text, before the answer is parsed: a deep answer that is not even JSON is refused for depth', () => {
    expect(checkAnswer(`{"summary":${'['.repeat(10_000)}}`, tools)).toEqual({ ok: false, error: TOO_DEEP });
  });

  it('the limit itself is allowed and one level more is refused', () => {
    expect(checkAnswer(answerOfDepth(MAX_PLAN_DEPTH), tools).ok).toBe(true);
    expect(checkAnswer(answerOfDepth(MAX_PLAN_DEPTH + 1), tools)).toEqual({ ok: false, error: TOO_DEEP });
  });

  it('brackets inside strings do not count', () => {
    const answer = JSON.stringify({
      summary: '[[[[',
      needsTools: true,
      steps: [{ id: 'a', tool: 'srv.read', args: { text: '{'.repeat(10_000) } }],
    });
    expect(checkAnswer(answer, tools).ok).toBe(true);
  });

  it('extractJson finds nothing in an answer nested too deeply', () => {
    expect(extractJson(answerOfDepth(10_000))).toBeUndefined();
    expect(extractJson('```json\n{"a": [1]}\n```')).toEqual({ a: [1] });
  });

  it('the planner is told the limit', () => {
    expect(plannerSystemPrompt(tools)).toContain(
      `Objects and arrays may nest at most ${MAX_PLAN_DEPTH} levels deep, the plan object itself counting as level 1.`,
    );
  });
});

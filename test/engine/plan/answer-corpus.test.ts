/**
 * The corpus of planner answers (`answer-corpus.ts`): how many Steward reads as meant, with no model call, before
 * forgiving parsing (the reader as it was: the text from its first `{` to its last `}`, parsed strictly, then
 * expanded and validated) and now (`checkAnswer`). Both shares are printed; every refusal must name its step.
 */
import { describe, expect, it } from 'vitest';
import { expandCompactPlan } from '../../../src/engine/plan/compact-plan.ts';
import { checkAnswer } from '../../../src/engine/plan/planner-prompt.ts';
import type { Plan } from '../../../src/engine/plan/plan-schema.ts';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import type { Result } from '../../../src/engine/result.ts';
import type { Json } from '../../../src/engine/types.ts';
import { corpus, corpusTools, type CorpusAnswer } from './answer-corpus.ts';

/** The reader before forgiving parsing, step for step as it was. */
function strictRead(text: string): Result<Plan> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return { ok: false, error: 'the answer is not a JSON object' };
  let json: Json;
  try {
    json = JSON.parse(text.slice(start, end + 1)) as Json;
  } catch {
    return { ok: false, error: 'the answer is not a JSON object' };
  }
  const plan = expandCompactPlan(json);
  if (!plan.ok || !plan.value.needsTools) return plan;
  const valid = validatePlan(plan.value, corpusTools);
  return valid.ok ? { ok: true, value: valid.value.plan } : { ok: false, error: valid.error.join('\n') };
}

function forgivingRead(text: string): Result<Plan> {
  const checked = checkAnswer(text, corpusTools);
  return checked.ok ? { ok: true, value: checked.value.plan } : checked;
}

/** A plan as the corpus writes it: `answer`, or its steps as `id<deps:tool`. */
function shape(plan: Plan): string {
  if (!plan.needsTools) return 'answer';
  return plan.steps
    .map(
      (s) =>
        `${s.id}${s.dependsOn.length > 0 ? `<${s.dependsOn.join(',')}` : ''}:${s.kind === 'tool' ? s.tool : s.kind}`,
    )
    .join(' ');
}

/** Whether a reading is what the corpus expects: the same plan, or a refusal naming the step and saying what it must. */
function asMeant(entry: CorpusAnswer, read: Result<Plan>): boolean {
  if (entry.accepted !== undefined) return read.ok && shape(read.value) === entry.accepted;
  if (read.ok || !entry.refused) return false;
  return namesStep(read.error, entry.refused) && entry.refused.says.every((w) => read.error.includes(w));
}

function namesStep(error: string, step: { id: string; index: number }): boolean {
  return error.includes(`step ${step.id}:`) || error.includes(`steps[${step.index}]`);
}

const share = (n: number, of: number) => `${n}/${of} (${Math.round((100 * n) / of)}%)`;

describe('the corpus of planner answers', () => {
  const before = corpus.map((e) => ({ e, read: strictRead(e.answer) }));
  const after = corpus.map((e) => ({ e, read: forgivingRead(e.answer) }));

  it('holds about 25 answers, most of them with a slip', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(25);
    expect(new Set(corpus.map((e) => e.name)).size).toBe(corpus.length);
  });

  it.each(corpus.map((e) => [e.name, e] as const))('reads %s as meant', (_, entry) => {
    const read = forgivingRead(entry.answer);
    if (entry.accepted !== undefined) {
      expect(read.ok ? shape(read.value) : read.error).toBe(entry.accepted);
    } else {
      expect(read.ok).toBe(false);
      if (read.ok || !entry.refused) return;
      expect(namesStep(read.error, entry.refused), read.error).toBe(true);
      for (const word of entry.refused.says) expect(read.error).toContain(word);
    }
  });

  it('accepts every answer whose meaning is certain, where the strict reader accepted under a third', () => {
    const acceptedBefore = before.filter((r) => r.read.ok).length;
    const acceptedAfter = after.filter((r) => r.read.ok).length;
    const meantBefore = before.filter((r) => asMeant(r.e, r.read)).length;
    const meantAfter = after.filter((r) => asMeant(r.e, r.read)).length;
    const certain = corpus.filter((e) => e.accepted !== undefined).length;
    console.log(
      `planner answer corpus, ${corpus.length} answers: accepted before ${share(acceptedBefore, corpus.length)}, ` +
        `after ${share(acceptedAfter, corpus.length)}; of the ${certain} whose meaning is certain, before ` +
        `${share(acceptedBefore, certain)}, after ${share(acceptedAfter, certain)}; read as meant (accepted as ` +
        `expected, or refused naming the step) before ${share(meantBefore, corpus.length)}, after ` +
        `${share(meantAfter, corpus.length)}`,
    );
    expect(acceptedAfter).toBe(certain);
    expect(meantAfter).toBe(corpus.length);
    expect(acceptedBefore).toBeLessThan(corpus.length / 3);
    // Nothing the strict reader accepted is read otherwise now.
    for (const { e, read } of before) if (read.ok) expect(asMeant(e, read), e.name).toBe(true);
  });

  it('names the step in every refusal', () => {
    for (const { e, read } of after.filter((r) => !r.read.ok)) {
      expect(e.refused, e.name).toBeDefined();
      if (!read.ok && e.refused) expect(namesStep(read.error, e.refused), read.error).toBe(true);
    }
  });
});

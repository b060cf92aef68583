import { describe, expect, it } from 'vitest';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import { toPlanCard } from '../../../src/engine/run/plan-card.ts';
import type { Json } from '../../../src/engine/types.ts';
import { createPlan, createTool } from '../fixtures.ts';

const plan = createPlan([
  { id: 'read', tool: 'srv.read' },
  { id: 'send', tool: 'srv.send', dependsOn: ['read'], args: { to: 'ops', text: { $ref: 'steps.read.output.text' } } },
]);
const validated = validatePlan(plan, [createTool('srv.read'), createTool('srv.send')]);
if (!validated.ok) throw new Error(validated.error.join('; '));
const v = validated.value;

function previewOfSend(outputs?: ReadonlyMap<string, Json>): string | undefined {
  const card = toPlanCard('r1', 1, v, {
    needsReview: true,
    amendmentsLeft: 1,
    requester: { id: 'ada', channel: 'test' },
    ...(outputs ? { outputs } : {}),
  });
  return card.steps.find((s) => s.id === 'send')?.argsPreview;
}

describe("a plan card's arguments", () => {
  it('before anything ran, a reference is shown as written', () => {
    expect(previewOfSend()).toBe('{"to":"ops","text":{"$ref":"steps.read.output.text"}}');
  });

  it('mid-run, a reference filled by an earlier output shows the value the step sends', () => {
    expect(previewOfSend(new Map([['read', { text: 'Dear ops' }]]))).toBe('{"to":"ops","text":"Dear ops"}');
  });

  it('a reference that cannot be filled yet stays as written', () => {
    expect(previewOfSend(new Map())).toBe('{"to":"ops","text":{"$ref":"steps.read.output.text"}}');
  });

  it('a filled-in value nested too deeply to show stays as written', () => {
    let deep: Json = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(previewOfSend(new Map([['read', { text: deep }]]))).toBe(
      '{"to":"ops","text":{"$ref":"steps.read.output.text"}}',
    );
  });
});

describe("a plan card's steps mid-run", () => {
  it('carry what each started step did, so a card shown at a hold or after a restart shows them finished', () => {
    const card = toPlanCard('r1', 2, v, {
      needsReview: true,
      amendmentsLeft: 3,
      requester: { id: 'ada', channel: 'test' },
      progress: {
        read: {
          status: 'failed',
          attempt: 1,
          error: { code: 'tool_error', message: 'no such file', retryable: false },
        },
        send: { status: 'pending', attempt: 0 },
      },
    });
    expect(card.steps.map((s) => [s.id, s.status, s.detail])).toEqual([
      ['read', 'failed', 'no such file'],
      ['send', undefined, undefined],
    ]);
  });
});

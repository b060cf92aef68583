/** The amend and edit modals fit Discord's form limits; a big plan is edited per step or refused, never cut. */
import { describe, expect, it } from 'vitest';
import { parseCustomId, PLAN_INPUT, stepInputId } from '../../../src/bot/discord/discord-actions.ts';
import { readEditModal, renderAmendModal, renderEditModal } from '../../../src/bot/discord/discord-modals.ts';
import type { EditablePlan } from '../../../src/engine/channel.ts';
import type { Json } from '../../../src/engine/types.ts';
import { modalProblems } from '../../fakes/discord-limits.ts';

const REF = { runId: '6f1c1a52-93a4-4e5e-9b53-0d6f0e0c0a01', revision: 2 };

function step(id: string, size = 20): { [key: string]: Json } {
  return { id, tool: 'everything.echo', args: { message: 'm'.repeat(size) } };
}

function editable(steps: Json[], started: string[] = []): EditablePlan {
  return { revision: 2, status: 'running', plan: { summary: 'Say hello', steps }, breakpoints: [], started };
}

type Input = { custom_id: string; label: string; value?: string; required?: boolean };
function inputs(modal: { components: unknown[] }): Input[] {
  return modal.components.map((row) => (row as { components: Input[] }).components[0] as Input);
}

describe('the amend modal', () => {
  it('has a title within 45 characters even for a long summary, and one required paragraph', () => {
    const modal = renderAmendModal(REF, 'Rename every file in the shared drive @everyone '.repeat(20));
    expect(modalProblems(modal)).toEqual([]);
    expect(modal.title.length).toBeLessThanOrEqual(45);
    expect(modal.title).toMatch(/^Amend: Rename every file/);
    expect(parseCustomId(modal.custom_id)).toEqual({ kind: 'amend-modal', ...REF });
    expect(inputs(modal)).toEqual([expect.objectContaining({ custom_id: 'amend-text', required: true })]);
  });
});

describe('the edit modal', () => {
  it('shows the whole plan as indented JSON when it fits one box', () => {
    const plan = editable([step('s1'), step('s2')]);
    const result = renderEditModal(REF, plan);
    if (!('modal' in result)) throw new Error(result.refusal);
    expect(modalProblems(result.modal)).toEqual([]);
    expect(parseCustomId(result.modal.custom_id)?.kind).toBe('edit-modal');
    expect(inputs(result.modal)[0]?.value).toBe(JSON.stringify(plan.plan, null, 2));
    const read = readEditModal('edit-modal', { [PLAN_INPUT]: '{"steps":[]}' }, plan);
    expect(read).toEqual({ ok: true, value: { steps: [] } });
  });

  it('gives each step not yet started its own box when the plan is too big for one', () => {
    const plan = editable([step('s1', 1_500), step('s2', 1_500), step('s3', 1_500)], ['s1']);
    const result = renderEditModal(REF, plan);
    if (!('modal' in result)) throw new Error(result.refusal);
    expect(modalProblems(result.modal)).toEqual([]);
    expect(parseCustomId(result.modal.custom_id)?.kind).toBe('steps-modal');
    expect(inputs(result.modal).map((i) => [i.custom_id, i.label])).toEqual([
      ['step:s2', 'Step s2'],
      ['step:s3', 'Step s3'],
    ]);
    expect(inputs(result.modal)[0]?.value).toBe(JSON.stringify(step('s2', 1_500), null, 2));
  });

  it('reading the boxes back keeps started steps as stored, parses edited ones and drops emptied ones', () => {
    const plan = editable([step('s1', 1_500), step('s2', 1_500), step('s3', 1_500)], ['s1']);
    const values = { [stepInputId('s2')]: '{"id":"s2","tool":"everything.add"}', [stepInputId('s3')]: '  ' };
    expect(readEditModal('steps-modal', values, plan)).toEqual({
      ok: true,
      value: { steps: [step('s1', 1_500), { id: 's2', tool: 'everything.add' }] },
    });
  });

  it('a JSON mistake is a sentence naming the box, and nothing changes', () => {
    const plan = editable([step('s1'), step('s2')]);
    const bad = readEditModal('steps-modal', { [stepInputId('s2')]: '{"id": "s2",' }, plan);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/^Step s2 is not valid JSON: .+\. Nothing changed\.$/);
    const whole = readEditModal('edit-modal', { [PLAN_INPUT]: 'not json' }, plan);
    if (!whole.ok) expect(whole.error).toMatch(/^The plan is not valid JSON/);
    else throw new Error('accepted invalid JSON');
  });

  it('refuses, saying the size and to amend in words, when neither fits', () => {
    const many = renderEditModal(REF, editable(Array.from({ length: 60 }, (_, i) => step(`s${i}`, 100))));
    expect('refusal' in many && many.refusal).toMatch(
      /^This plan is [\d,]+ characters of JSON and 60 steps not yet run .*Amend/,
    );
    const huge = renderEditModal(REF, editable([step('s1', 5_000)]));
    expect('refusal' in huge && huge.refusal).toMatch(
      /^This plan is 5,\d{3} characters of JSON, more than .*\*\*Amend\*\*/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { renderConsole } from '../../src/bot/console-render.ts';
import { createPlanCard, createStep } from './slack/fixtures.ts';

describe('console plan card', () => {
  it('shown at a hold mid-run: finished steps say so, with Approve / Amend / Stop and the real amendment count', () => {
    const text = renderConsole(
      createPlanCard({
        revision: 1,
        actions: ['approve', 'amend', 'stop'],
        amendmentsLeft: 3,
        steps: [
          createStep(1, { status: 'succeeded', detail: '' }),
          createStep(2, { status: 'failed', detail: 'timed out' }),
          createStep(3),
        ],
      }),
    );
    expect(text).toMatch(/1\. \[step_1\] .* ✔ succeeded\n/);
    expect(text).toMatch(/2\. \[step_2\] .* ✖ failed: timed out\n/);
    expect(text).toMatch(/3\. \[step_3\] .* risk low\n/);
    expect(text).toContain(
      'Type "approve" to let the held steps run, "amend <what to change>" (3 left), or "stop" (finished results are kept).',
    );
    expect(text).not.toContain('No amendments left');
    expect(renderConsole(createPlanCard({ actions: ['approve', 'stop'], amendmentsLeft: 0 }))).toContain(
      'Type "approve" to let the held steps run, or "stop" (finished results are kept).',
    );
  });

  it('at first review: Approve / Amend with the count, or no amendments left when none are', () => {
    expect(renderConsole(createPlanCard({ amendmentsLeft: 2 }))).toContain('"amend <what to change>" (2 left)');
    expect(renderConsole(createPlanCard({ amendmentsLeft: 0, actions: ['approve', 'cancel'] }))).toContain(
      'Type "approve" (no amendments left), or "cancel".',
    );
  });
});

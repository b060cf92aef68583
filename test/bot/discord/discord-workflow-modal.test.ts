/** "Save as workflow" on Discord, as pure rendering: the button on a completed card, the name form, its reading. */
import { ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { CUSTOM_ID_MAX, parseCustomId, WORKFLOW_NAME_INPUT } from '../../../src/bot/discord/discord-actions.ts';
import { renderCard, type DiscordMessage } from '../../../src/bot/discord/discord-render.ts';
import { readSaveWorkflow, renderSaveWorkflowModal } from '../../../src/bot/discord/discord-workflow-modal.ts';
import { createLiveCard, withReport, withRunStatus } from '../../../src/bot/live-card-state.ts';
import type { RunStatus } from '../../../src/engine/types.ts';
import { messageProblems, modalProblems } from '../../fakes/discord-limits.ts';
import { createPlanCard } from '../slack/fixtures.ts';

const NOW = 1_700_000_000_000;
// The longest run id a custom id takes, so the ids are checked at their longest.
const REF = { runId: 'r'.repeat(64), revision: 999_999_999 };

function ended(status: RunStatus, autoStarted = false) {
  const live = createLiveCard(createPlanCard({ ...REF, needsReview: !autoStarted }), NOW);
  const changed = withRunStatus(live, { kind: 'runStatus', runId: REF.runId, status, actions: [] }, NOW);
  return withReport(changed, { kind: 'report', runId: REF.runId, status, text: 'done' }, NOW);
}

function buttons(message: DiscordMessage): Array<{ label?: string; custom_id?: string }> {
  return message.components.flatMap((row) => row.components as Array<{ label?: string; custom_id?: string }>);
}

describe('Save as workflow on a Discord card', () => {
  it('is the only button on the card of a completed run, carrying its run and revision; no other card has it', () => {
    for (const autoStarted of [false, true]) {
      const message = renderCard(ended('completed', autoStarted), NOW);
      expect(messageProblems(message)).toEqual([]);
      const [save, ...others] = buttons(message);
      expect(others).toEqual([]);
      expect(save?.label).toBe('Save as workflow');
      expect(save?.custom_id?.length).toBeLessThanOrEqual(CUSTOM_ID_MAX);
      expect(parseCustomId(save?.custom_id)).toEqual({ kind: 'wfsave', ...REF });
    }
    for (const status of ['failed', 'stopped', 'cancelled'] as const)
      expect(renderCard(ended(status), NOW).components).toEqual([]);
    const waiting = renderCard(createLiveCard(createPlanCard(REF), NOW), NOW);
    expect(buttons(waiting).map((b) => parseCustomId(b.custom_id)?.kind)).not.toContain('wfsave');
  });

  it('opens a form with one short name input, within Discord limits, whatever the summary', () => {
    const modal = renderSaveWorkflowModal(REF, `Send the digest @everyone <@123> ${'x'.repeat(500)}`);
    expect(modalProblems(modal)).toEqual([]);
    expect(parseCustomId(modal.custom_id)).toEqual({ kind: 'wfsave-modal', ...REF });
    expect(modal.title).toMatch(/^Save as workflow: Send the digest @\u200beveryone/);
    const [row] = modal.components as unknown as Array<{ components: Array<Record<string, unknown>> }>;
    expect(row?.components).toEqual([
      expect.objectContaining({
        type: ComponentType.TextInput,
        custom_id: WORKFLOW_NAME_INPUT,
        required: true,
        max_length: 40,
      }),
    ]);
  });

  it('reads the name as the save command; a name of several words is refused with a sentence', () => {
    expect(readSaveWorkflow('  digest ')).toEqual({ ok: true, value: 'save digest' });
    expect(readSaveWorkflow('my digest')).toEqual({
      ok: false,
      error: 'The name is one word, such as digest or nightly-report. Nothing was saved.',
    });
    expect(readSaveWorkflow('')).toMatchObject({ ok: false });
  });
});

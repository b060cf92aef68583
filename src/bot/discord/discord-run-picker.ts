/**
 * The run picker as a Discord message (pure): a line per run, and a button per run whose custom id carries the run
 * and revision as a card's buttons do (`stw:stop:<run>:<revision>`), so a press is handled like a card's.
 */
import type { RunPicker } from '../run-picker.ts';
import { shortRunId } from '../../engine/text.ts';
import { buttonRows, decisionButtons, textMessage, type DiscordMessage } from './discord-render.ts';
import { inertMentions, safeText } from './discord-text.ts';

/** The picker's lines (within Discord's 2,000 characters for ten runs) and its buttons, five to a row. */
export function renderRunPicker(picker: RunPicker): DiscordMessage {
  const lines = [
    safeText(picker.intro, 200),
    ...picker.entries.map((entry) => `• ${safeText(entry.line, 140)}`),
    ...(picker.more ? [safeText(picker.more, 100)] : []),
  ];
  const buttons = picker.entries.flatMap((entry) =>
    decisionButtons([entry.action], entry, null).map((button) => ({
      ...button,
      label: inertMentions(`${button.label} ${shortRunId(entry.runId)}`),
    })),
  );
  return textMessage(lines.join('\n'), buttonRows(buttons));
}

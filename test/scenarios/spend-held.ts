/**
 * The world of context `spendCapHeld` (issue 30), the same on every channel: the operator caps the workspace at $5.00
 * a day, and an earlier `llm` step cost $15.00 (a million prompt tokens at the default price), so every plan with a
 * `think` step is estimated past what is left and waits for an approver at its card. Everything the cell really
 * calls (a few thousand tokens a call) fits under the cap: only the estimate passes it.
 */
import type { StewardSettings } from '../../src/engine/flows/deps.ts';
import { NO_SPEND_CAPS } from '../../src/engine/spend.ts';
import type { TestDatabase } from '../helpers/databases.ts';

/** The operator's settings: the workspace's daily cap, models unpriced (counted at $15 a million tokens). */
export const SPEND_HELD_SETTINGS: Partial<StewardSettings> = {
  spend: { caps: { ...NO_SPEND_CAPS, workspace: { day: 5_000_000, month: null } }, defaultPricePerMillion: 15 },
};

/** How each channel's approver is named in "Approved by … past …" (the console's approver is Boss). */
export const CONSOLE_APPROVER = { id: 'boss', name: 'Boss', channel: 'console' } as const;

/** The history a card's estimate reads: one earlier `llm` step of a million prompt tokens, before the stage starts. */
export async function seedCostlyStep(db: TestDatabase): Promise<void> {
  await db.db
    .insertInto('llm_usage')
    .values({ run_id: null, role: 'llm_step', model: 'step-model', input_tokens: 1_000_000, output_tokens: 0 })
    .execute();
}

/**
 * The "Full plan" modal (pure): every step of the stored plan with its arguments as written, for a reviewer whose
 * card had to shorten them. One section per step, each within Slack's 3,000 characters, the whole within a modal's
 * 100 blocks and 250 kB (plans hold at most 100 steps); a step too long for its share says where the rest is.
 */
import type { types } from '@slack/bolt';
import type { Json } from '../../engine/types.ts';
import { planViewSteps, type PlanViewStep } from '../plan-view.ts';
import { safeMrkdwn } from './slack-text.ts';

/** Characters all steps may take together: at 4 bytes a character still under the 250 kB a view may hold. */
const VIEW_TEXT_BUDGET = 55_000;
const SECTION_MAX = 2_900;

/** The modal for a plan at `revision`. */
export function renderPlanView(plan: Json, revision: number): types.ModalView {
  const steps = planViewSteps(plan);
  const share = Math.min(SECTION_MAX, Math.floor(VIEW_TEXT_BUDGET / Math.max(1, steps.length)));
  const intro = `_Revision ${revision}, as stored: ${steps.length} step(s). Only you see this._`;
  const blocks: types.KnownBlock[] = steps.map((step, i) => ({
    type: 'section',
    text: { type: 'mrkdwn', text: stepText(step, share, i === 0 ? intro : ''), verbatim: true },
  }));
  return {
    type: 'modal',
    title: { type: 'plain_text', text: 'Full plan' },
    close: { type: 'plain_text', text: 'Close' },
    blocks: blocks.length > 0 ? blocks : [{ type: 'section', text: { type: 'mrkdwn', text: '_(no steps)_' } }],
  };
}

function stepText(step: PlanViewStep, max: number, before: string): string {
  const after = step.dependsOn.length > 0 ? ` · after ${step.dependsOn.join(', ')}` : '';
  const head = `${before ? `${before}\n` : ''}*${step.number}. ${safeMrkdwn(step.id, 60)}* · \`${safeMrkdwn(step.target, 120)}\`${safeMrkdwn(after, 300)}`;
  const description = step.description ? `\n${safeMrkdwn(step.description, 600)}` : '';
  const room = max - head.length - description.length - 8;
  if (!step.args) return `${head}${description}`;
  const cut = '\n… (cut here to fit; Edit plan shows the whole plan as JSON)';
  const args = safeMrkdwn(step.args.replace(/```/g, 'ˋˋˋ'), Math.max(20, room), cut);
  return `${head}${description}\n\`\`\`${args}\`\`\``;
}

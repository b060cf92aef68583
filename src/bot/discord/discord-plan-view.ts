/**
 * "Full plan" on Discord (pure): every step of the stored plan with its arguments as written, for a reviewer whose
 * card had to shorten them. Discord has no read-only form, so it comes as private messages of one embed each (a
 * description holds 4,096 characters), at most eight; a step too long for its share is cut with a counted note.
 */
import { Colors, type APIEmbed } from 'discord.js';
import type { Json } from '../../engine/types.ts';
import { planViewSteps, type PlanViewStep } from '../plan-view.ts';
import { DESCRIPTION_MAX, type DiscordMessage } from './discord-render.ts';
import { codeBlockText, codeSpan, safeText } from './discord-text.ts';

const MESSAGES_MAX = 8;
const STEP_MAX = 1_500;

/** The private messages that show a plan at `revision`, in order. */
export function renderPlanView(plan: Json, revision: number): DiscordMessage[] {
  const steps = planViewSteps(plan);
  const share = Math.min(STEP_MAX, Math.floor(((DESCRIPTION_MAX - 100) * MESSAGES_MAX) / Math.max(1, steps.length)));
  const pages: string[][] = [[]];
  let used = 0;
  for (const step of steps) {
    const text = stepText(step, share);
    if (used + text.length + 2 > DESCRIPTION_MAX - 100) {
      pages.push([]);
      used = 0;
    }
    pages.at(-1)!.push(text);
    used += text.length + 2;
  }
  return pages.map((texts, i) => ({
    embeds: [embed(texts.join('\n\n') || '*(no steps)*', i, pages.length, revision, steps.length)],
    components: [],
    allowed_mentions: { parse: [] },
  }));
}

function embed(description: string, page: number, pages: number, revision: number, steps: number): APIEmbed {
  const title = pages > 1 ? `Full plan (${page + 1} of ${pages})` : 'Full plan';
  return {
    title,
    description,
    color: Colors.Blurple,
    footer: { text: `Revision ${revision}, as stored: ${steps} step(s). Only you see this.` },
  };
}

function stepText(step: PlanViewStep, max: number): string {
  const after = step.dependsOn.length > 0 ? ` · after ${safeText(step.dependsOn.join(', '), 200)}` : '';
  const head = `**${step.number}.** ${codeSpan(step.id, 60)} ${codeSpan(step.target, 120)}${after}`;
  const description = step.description ? `\n${safeText(step.description, 400)}` : '';
  if (!step.args) return `${head}${description}`;
  const room = Math.max(60, max - head.length - description.length - 1);
  return `${head}${description}\n${codeBlockText(step.args, room, 'json')}`;
}

/**
 * What a person in Discord reads in what Steward sent (the fake's recorded calls): message bodies as text, the kinds
 * of their buttons and menus, and which of them are a run's card, hold or report.
 */
import type { APIEmbed } from 'discord.js';
import { parseCustomId } from '../../src/bot/discord/discord-actions.ts';
import { shownText } from '../e2e/discord-harness.ts';
import type { DiscordCall } from '../fakes/fake-discord-rest.ts';

/** A message body as sent: posted, edited, or an interaction's answer. */
export type Shown = { content?: string; embeds?: APIEmbed[]; components?: unknown[] };

/** The message bodies with something to read in these calls, in order (an interaction answer's is its `data`). */
export function bodiesOf(calls: readonly DiscordCall[]): Shown[] {
  return calls.flatMap((c) => {
    const body = c.body as { data?: Shown } & Shown;
    const m = body?.data ?? body;
    return m && (m.content || m.embeds) ? [m] : [];
  });
}

export const textOf = (m: Shown) => shownText({ content: m.content ?? '', embeds: m.embeds ?? [] });

/** The kinds of the buttons and menus in a message body. */
export function kinds(body: Shown): string[] {
  const rows = (body.components ?? []) as Array<{ components?: Array<{ custom_id?: string }> }>;
  return rows.flatMap((r) => r.components ?? []).map((c) => parseCustomId(c.custom_id)?.kind ?? '?');
}

/** A run's card offering Approve. */
export const isCard = (b: Shown) => kinds(b).includes('approve') && /revision \d+/.test(textOf(b));

/** A run's card in any state (its heading names the revision), a step held at a breakpoint, or a run's report. */
export function showsRun(b: Shown): boolean {
  const text = textOf(b);
  return /· revision \d+/.test(text) || /Holding (after|before) step/.test(text) || /^\*\*\S* ?Report\b/m.test(text);
}

/** The text inputs of a modal, by custom id, with their prefilled values. */
export function modalInputs(components: unknown[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  const visit = (c: unknown) => {
    if (!c || typeof c !== 'object') return;
    const o = c as { type?: number; custom_id?: string; value?: string; components?: unknown[]; component?: unknown };
    if (o.type === 4 && o.custom_id) inputs[o.custom_id] = o.value ?? '';
    for (const child of o.components ?? []) visit(child);
    if (o.component) visit(o.component);
  };
  for (const c of components) visit(c);
  return inputs;
}

/**
 * Flags tool descriptions that look aimed at the model rather than at people: instructions to ignore or
 * override, talk of system prompts or hidden steps, and characters that hide text. Heuristics for the card,
 * never a decision: a flagged tool still needs the normal review.
 */
import type { ToolInfo } from '../types.ts';
import type { Plan } from './plan-schema.ts';

const PATTERNS: [RegExp, string][] = [
  [
    /\b(ignore|disregard|forget|override)\b[^.]{0,40}\b(instructions?|rules?|prompts?|previous|above)\b/i,
    'tells the model to ignore its instructions',
  ],
  [/\bsystem prompt\b|\byou are (now )?(an? )?(ai|assistant|model)\b/i, 'talks to the model about its prompt or role'],
  [/<\s*(important|system|instructions?|secret)\s*>/i, 'hides instructions in tags'],
  [
    /\b(do not|don't|never) (tell|mention|inform|show)\b[^.]{0,30}\b(user|human|person)\b/i,
    'asks to keep something from the person',
  ],
  [
    /\b(before|after|instead of) (using|calling) (this|any other) tool\b[^.]{0,60}\b(call|read|send)\b/i,
    'asks for other tool calls',
  ],
];
// Zero-width and bidirectional control characters, and Unicode tag characters, can hide text from people.
const HIDDEN = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]|\uDB40[\uDC00-\uDC7F]/;
const LONG = 4_000;

/** Reasons a tool's description looks suspicious; empty when it does not. */
export function toolWarnings(tool: Pick<ToolInfo, 'name' | 'description'>): string[] {
  // Only the start is scanned (a longer text is flagged for its length), which bounds the cost.
  const d = tool.description.slice(0, LONG);
  const found = PATTERNS.filter(([re]) => re.test(d)).map(([, why]) => why);
  const comment = d.indexOf('<!--');
  if (comment >= 0 && d.indexOf('-->', comment + 4) >= 0) found.push('contains an HTML comment');
  if (HIDDEN.test(d)) found.push('contains invisible characters');
  if (tool.description.length > LONG) found.push(`is unusually long (${tool.description.length} characters)`);
  return found.map((why) => `The description of ${tool.name} ${why}.`);
}

/** Warnings about the tools a plan uses, for its card. */
export function planWarnings(plan: Plan, tools: readonly ToolInfo[]): string[] {
  const used = new Set(plan.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])));
  return tools.filter((t) => used.has(t.name)).flatMap((t) => toolWarnings(t));
}

/** How each thing the oracle names reads on a chat card or message, the same in Slack and Discord. */
import type { Seen } from './oracle.ts';

const LOOKS: Record<string, RegExp> = {
  'report:completed': /The work is over\.[^]*|Completed/,
  'report:stopped': /Stopped/,
  'report:any': /The work is over\./,
  'report:assistant': /Report of the Assistant "ops":\s*The work is over\./,
  'revision:1': /revision 1\b/,
  // The card of a run handed to ops names it and the parent's step (Slack: Assistant *ops*; Discord: **Assistant** ops).
  'card:child': /Assistant\W+ops\W+\(a step of run `\w+`\)/,
  'breakpoint:any': /Holding (after|before) step/,
  status: /Run running|running: \d+\/\d+ steps/i,
  history: /History of/,
  paused: /Paused/,
  quickAnswer: /It is noon\./,
  alreadyEnded: /already ended/,
  invalidStopped: /turned out invalid/,
  spendHeld: /spend cap of \$5\.00: it waits for an approver/,
  spendRefused: /spend cap of \$5\.00: only an approver can approve it/,
  approvedPastCap: /Approved by [^\n]+ past the workspace's daily spend cap of \$5\.00/,
};

/** The pattern that shows `what` in a chat transcript. */
export function chatLooks(what: Seen): RegExp {
  const id = /^breakpoint:(?!any$)(.+)$/.exec(what)?.[1];
  return id ? new RegExp(`Holding after step \`${id}\``) : LOOKS[what]!;
}

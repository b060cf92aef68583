/**
 * Renders platform-neutral messages as terminal text (pure). The text still holds whatever models, tools and people
 * wrote; the channel makes it inert as it writes it (`console-text.ts`).
 */
import type { OutboundMessage, PlanCard } from '../engine/messages.ts';
import { estimateLine, tookLine } from '../engine/run/estimates.ts';
import { fileLine } from './attachments.ts';
import { spendLine, spendWaitText } from './spend-words.ts';
import { connectionCheckText, type ConnectionsStyle } from './connection-words.ts';
import { fieldPrompt } from './console-question.ts';
import { shortId } from './console-runs.ts';
import { fieldHint, questionClosedText, questionFooter, questionHeader } from './question-words.ts';

const ICONS: Record<string, string> = {
  pending: '·',
  running: '▶',
  succeeded: '✔',
  failed: '✖',
  skipped: '↷',
  cancelled: '■',
};

/** Text for one outbound message ('' when the terminal has nothing to show for it). */
export function renderConsole(message: OutboundMessage): string {
  switch (message.kind) {
    case 'plan':
      return renderPlan(message);
    case 'progress':
      return `  ${ICONS[message.status] ?? '?'} ${message.stepId} ${message.status} — ${message.detail} [${message.finished}/${message.total}]`;
    case 'report':
      return `\n=== Report (${message.status}) ===\n${message.text}\n`;
    case 'answer':
      return message.text;
    case 'notice':
      return `${message.level === 'error' ? '✖' : message.level === 'warning' ? '!' : 'i'} ${message.text}`;
    case 'runStatus':
      // The only status without a card or notice of its own: a request is with the quick path, then the planner.
      if (message.took) return tookLine(message.took.ms, message.took.estimate);
      if (message.status !== 'planning') return '';
      return `… ${message.quick ? 'looking into it' : 'planning'} (type "cancel" to drop it)`;
    case 'breakpoint':
      return `\n=== Breakpoint ${message.before ? 'before' : 'after'} ${message.stepId} ===\n${message.before ? 'It will send: ' : ''}${message.output}\nType "continue", "stop", or "edit <json>" to rewrite the steps not yet run.`;
    case 'connectionCheck':
      return `? ${connectionCheckText(message.server, CONSOLE_CONNECTIONS_STYLE, false, message.workspace)}`;
    case 'question':
      return [
        `\n=== Question from MCP server "${message.server}" ===`,
        questionHeader(message),
        `  ${message.message}`,
        ...message.fields.map((f) => `  - ${f.label}: ${fieldHint(f)}`),
        questionFooter(message, message.requester.name ?? message.requester.id),
        'Answer each field below (an empty line keeps the default); type "decline" to decline.',
        ...message.fields.slice(0, 1).map(fieldPrompt),
      ].join('\n');
    case 'questionClosed':
      return `i ${questionClosedText(message, (a) => a.name ?? a.id)}`;
    case 'files':
      // A terminal cannot show them: each by name and size; the dashboard's run page shows the images.
      return [`Files from this run (${message.files.length}, not saved; the dashboard shows them):`]
        .concat(message.files.map((f) => `  📎 ${fileLine(f)}`))
        .join('\n');
  }
}

/** How the console shows a link (printed whole) and the command, for the words of `connections`. */
export const CONSOLE_CONNECTIONS_STYLE: ConnectionsStyle = {
  link: (url, words) => `${words}: ${url}`,
  command: (action, server) => `connections${action ? ` ${action} ${server ?? ''}` : ''}`,
};

/** Breakpoints offered, not set: the person takes them with one command, or turns the offers off. */
function suggestionLines(card: PlanCard): string[] {
  return [
    'Suggested breakpoints (not set; "approve" does not stop at them):',
    ...card.suggestedBreakpoints.map((b) => `  before ${b.stepId}: ${b.why}`),
    'Type "break suggested" to hold before them; suggestions off: "suggestions off".',
  ];
}

function renderPlan(card: PlanCard): string {
  const lines = [
    `\n=== Plan (revision ${card.revision}, risk ${card.risk.toUpperCase()}) ===`,
    card.assistant ? `Assistant ${card.assistant}: ${card.summary}` : card.summary,
    ...(card.delegatedBy
      ? [`(handed over by run ${shortId(card.delegatedBy)}; its report goes back to that run)`]
      : []),
    '',
    ...card.steps.map((s) => {
      const deps = s.dependsOn.length > 0 ? ` after ${s.dependsOn.join(', ')}` : '';
      const opt = s.optional ? ' (optional)' : '';
      // On a card shown mid-run, a step that started says how it stands, so finished work never reads as pending.
      const state = s.status ? ` ${ICONS[s.status] ?? '?'} ${s.status}${s.detail ? `: ${s.detail}` : ''}` : '';
      // A server that connects per person: the step runs with this person's own account.
      const as = s.as ? ` as ${s.as.name ?? s.as.id}` : s.asWorkspace ? ' as the workspace' : '';
      return `${s.number}. [${s.id}] ${s.target}${as} ${s.argsPreview}${deps}${opt} — risk ${s.risk}${state}${s.description ? `\n     ${s.description}` : ''}`;
    }),
    '',
    `Layers: ${card.layers.map((l, i) => `${i + 1}: ${l.join(', ')}`).join(' | ')}`,
  ];
  if (card.estimate) lines.push(estimateLine(card.estimate));
  if (card.spend) lines.push(spendLine(card.spend));
  if (card.risks.length > 0) lines.push(`Risks: ${card.risks.join('; ')}`);
  if (card.breakpoints.length > 0) lines.push(`Breakpoints (hold after): ${card.breakpoints.join(', ')}`);
  if (card.breakpointsBefore.length > 0) lines.push(`Breakpoints (hold before): ${card.breakpointsBefore.join(', ')}`);
  if (card.suggestedBreakpoints.length > 0) lines.push(...suggestionLines(card));
  if (card.note) lines.push(card.note);
  const wait = card.needsReview ? spendWaitText(card.spend) : null;
  for (const w of wait ? [wait, ...card.warnings] : card.warnings) lines.push(`⚠ ${w}`);
  if (card.actions.includes('raise')) lines.push('An approver may type "raise" to raise the delegation depth.');
  if (card.actions.includes('widen'))
    lines.push('An approver may type "widen" to widen the grants of the run handed on.');
  if (card.needsReview && card.actions.includes('stop')) {
    // Steps held mid-run: an amendment or edit changes only the steps not yet run.
    const amend = card.actions.includes('amend') ? `, "amend <what to change>" (${card.amendmentsLeft} left)` : '';
    lines.push(`Type "approve" to let the held steps run${amend}, or "stop" (finished results are kept).`);
  } else if (card.needsReview && card.actions.includes('amend')) {
    lines.push(`Type "approve", "amend <what to change>" (${card.amendmentsLeft} left), or "cancel".`);
  } else if (card.needsReview) {
    // Past the amendment cap, or a hold during a run: only these two remain.
    lines.push(
      card.amendmentsLeft === 0 ? 'Type "approve" (no amendments left), or "cancel".' : 'Type "approve" or "cancel".',
    );
  } else if (card.actions.includes('resume')) {
    lines.push('This run is paused. Type "resume" or "stop".');
  } else {
    lines.push(
      `${card.autoStarted && card.risk === 'low' ? 'Low risk: started at once' : 'Running'}. Type "pause" or "stop" while it runs.`,
    );
  }
  return lines.join('\n');
}

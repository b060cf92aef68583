/** Renders platform-neutral messages as terminal text (pure). */
import type { OutboundMessage, PlanCard } from '../engine/messages.ts';

const ICONS: Record<string, string> = {
  pending: '·', running: '▶', succeeded: '✔', failed: '✖', skipped: '↷', cancelled: '■',
};

/** Text for one outbound message. */
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
  }
}

function renderPlan(card: PlanCard): string {
  const lines = [
    `\n=== Plan (revision ${card.revision}, risk ${card.risk.toUpperCase()}) ===`,
    card.summary,
    '',
    ...card.steps.map((s) => {
      const deps = s.dependsOn.length > 0 ? ` after ${s.dependsOn.join(', ')}` : '';
      const opt = s.optional ? ' (optional)' : '';
      return `${s.number}. [${s.id}] ${s.target} ${s.argsPreview}${deps}${opt} — risk ${s.risk}${s.description ? `\n     ${s.description}` : ''}`;
    }),
    '',
    `Layers: ${card.layers.map((l, i) => `${i + 1}: ${l.join(', ')}`).join(' | ')}`,
  ];
  if (card.risks.length > 0) lines.push(`Risks: ${card.risks.join('; ')}`);
  if (card.needsReview) {
    const amend = card.actions.includes('amend') ? `, "amend <what to change>" (${card.amendmentsLeft} left)` : ' (no amendments left)';
    lines.push(`Type "approve"${amend}, or "cancel".`);
  } else if (card.actions.includes('resume')) {
    lines.push('This run is paused. Type "resume" or "stop".');
  } else {
    lines.push(`${card.risk === 'low' ? 'Low risk: started at once' : 'Running'}. Type "pause" or "stop" while it runs.`);
  }
  return lines.join('\n');
}

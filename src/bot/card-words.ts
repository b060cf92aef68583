/**
 * The words and icons every chat platform shows for the same things (pure): a card's heading by run status, a step's
 * state, a run in a list, a notice's level, a report's title, the decision buttons. One place, so Slack and Discord
 * never drift apart; each renderer adds its own markup around them.
 */
import type { Notice } from '../engine/messages.ts';
import type { DecisionAction, RunStatus } from '../engine/types.ts';

/** A card's heading for the run's status. */
export const RUN_HEADINGS: Readonly<Record<RunStatus, string>> = {
  planning: '📝 Re-planning…',
  awaiting_review: '📋 Plan waiting for review',
  running: '▶️ Running',
  paused: '⏸️ Paused',
  stopping: '⏹️ Stopping…',
  completed: '✅ Completed',
  failed: '❌ Failed',
  cancelled: '🚫 Cancelled',
  stopped: '⏹️ Stopped',
};

/** A run that started and now holds steps for approval: not a plan waiting for its first review. */
export const HELD_HEADING = '✋ Steps waiting for approval';

/** A step's state on a card line. */
export const STEP_ICONS: Readonly<Record<string, string>> = {
  pending: '⚪',
  running: '⏳',
  succeeded: '✅',
  failed: '❌',
  skipped: '⏭️',
  cancelled: '⏹️',
};

/** A run's status in a list of runs. */
export const RUN_ICONS: Readonly<Record<RunStatus, string>> = {
  planning: '📝',
  awaiting_review: '📋',
  running: '▶️',
  paused: '⏸️',
  stopping: '⏹️',
  completed: '✅',
  failed: '❌',
  cancelled: '🚫',
  stopped: '⏹️',
};

/** A notice's level. */
export const LEVEL_ICONS: Readonly<Record<Notice['level'], string>> = { info: 'ℹ️', warning: '⚠️', error: '❌' };

/** A report's title by how the run ended. */
export function reportTitle(status: RunStatus): string {
  const titles: Partial<Record<RunStatus, string>> = {
    completed: '✅ Report',
    failed: '❌ Report (failed)',
    stopped: '⏹️ Report (stopped)',
    cancelled: '🚫 Report (cancelled)',
  };
  return titles[status] ?? `Report (${status})`;
}

/** The label of a decision button (`edit` and `breakpoint` have controls of their own, not buttons). */
export const DECISION_LABELS: Readonly<
  Record<'approve' | 'amend' | 'cancel' | 'pause' | 'resume' | 'stop' | 'raise' | 'widen', string>
> &
  Partial<Record<DecisionAction, string>> = {
  approve: 'Approve',
  amend: 'Amend',
  cancel: 'Cancel',
  pause: 'Pause',
  resume: 'Resume',
  stop: 'Stop',
  // Offered where a step asks to delegate deeper than the setting; only an approver's press raises it.
  raise: 'Raise depth',
  // Offered where an Assistant's plan hands work to another; only an approver's press widens its grants.
  widen: 'Widen grants',
};

/**
 * What a person is asked before a Stop or Cancel takes effect: Slack shows it as the button's confirm dialog, Discord
 * as a private Yes/No reply (it has no confirm dialog). `keep` is the answer that changes nothing.
 */
export const CONFIRM_WORDS: Readonly<
  Record<'cancel' | 'stop', { title: string; text: string; confirm: string; keep: string }>
> = {
  cancel: { title: 'Cancel this plan?', text: 'Nothing will run.', confirm: 'Cancel the plan', keep: 'Keep it' },
  stop: {
    title: 'Stop this run?',
    text: 'Steps in flight are cancelled; results already finished are kept.',
    confirm: 'Stop',
    keep: 'Keep it',
  },
};

/** A card's elapsed time: seconds as `42 s`, `3 min 05 s` or `1 h 02 min`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * The matrix's tally for one channel, printed after its cells ran: cells run, passed and failed, and every cell not
 * applicable or not driven yet, with why (the same reason once, with how many cells it covers).
 */
import { ACTIONS, cellName, CONTEXTS, SHAPES, type Planned } from './matrix.ts';

/**
 * The lines to print for a channel's plan, the cells that ran and those that failed. `channel` names the channel,
 * with its part when its cells are spread over several files.
 */
export function tally(channel: string, planned: Planned[], ran: number, failed: readonly string[], ms: number): string {
  const grouped = new Map<string, number>();
  for (const p of planned)
    if (p.fate !== 'run')
      grouped.set(
        `${p.fate === 'notApplicable' ? 'n/a' : 'not driven'}: ${p.reason}`,
        (grouped.get(`${p.fate === 'notApplicable' ? 'n/a' : 'not driven'}: ${p.reason}`) ?? 0) + 1,
      );
  const na = planned.filter((p) => p.fate === 'notApplicable').length;
  const nd = planned.filter((p) => p.fate === 'notDriven').length;
  // In the all-pairs set, the applicable cells not chosen are covered pair by pair by those that ran.
  const covered = ACTIONS.length * SHAPES.length * CONTEXTS.length - planned.length;
  return [
    `Scenario matrix, ${channel}: ${ran} cells run (${ran - failed.length} passed, ${failed.length} failed) in ${(ms / 1000).toFixed(1)} s; ${covered} left to \`npm run scenarios\` (their pairs met in cells that ran); ${na} not applicable; ${nd} not driven yet.`,
    ...failed.map((f) => `  failed: ${f}`),
    ...[...grouped].map(([reason, n]) => `  ${n} × ${reason}`),
  ].join('\n');
}

/** The name a test gets for a cell. */
export const testName = (p: Planned) => cellName(p.cell);

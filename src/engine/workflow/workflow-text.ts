/**
 * The answers people read about workflows, as plain text (each channel escapes it). Times are a zone's wall clock:
 * a schedule's own zone for its next fires, and for fires and versions the first schedule's zone (else UTC), said
 * once in a heading rather than on every line.
 */
import type { Step } from '../plan/plan-schema.ts';
import { describeStatus } from '../run/run-status.ts';
import { cut } from '../text.ts';
import type { Actor } from '../types.ts';
import type { FireReview, StoredFire, StoredSchedule, StoredWorkflow, WorkflowVersion } from '../workflows.ts';
import { WORKFLOW_FORMS } from './workflow-commands.ts';
import { zoneShort } from './zone-time.ts';

/** One workflow as the list shows it. */
export interface WorkflowListing {
  workflow: StoredWorkflow;
  schedules: StoredSchedule[];
  lastFire: StoredFire | null;
}

/** The command forms with one line each, for `help`. */
export const WORKFLOW_HELP = [
  'Workflows: an approved plan saved under a name, run again (now or on a schedule) with no planner call.',
  ...WORKFLOW_FORMS.map((f) => `  ${f.form} — ${f.says}`),
].join('\n');

const REVIEW: Record<FireReview, string> = {
  saved: 'runs on the approval given at save',
  every_fire: 'waits for approval at every fire',
};
const VERSIONS_SHOWN = 20;
const FIRES_SHOWN = 10;

/** Every workflow with its current version, review mode, owner, schedules and last fire; one block each. */
export function describeWorkflowList(items: readonly WorkflowListing[]): string {
  if (items.length === 0) return 'No workflows yet. After a run is approved, save its plan with: save <name>';
  const blocks = items.map(({ workflow: w, schedules, lastFire }) => {
    const lines = [`${w.name}, version ${w.version}: ${REVIEW[w.review]}; owner ${person(w.owner)}`];
    schedules.forEach((s, i) => lines.push(`  schedule ${i + 1}: ${scheduleWhen(s)}, ${nextFire(s)}`));
    if (schedules.length === 0) lines.push(`  no schedule (run it now with: workflow ${w.name} run)`);
    lines.push(lastFire ? `  last fire: ${fireLine(lastFire, fireZone(schedules))}` : '  not fired yet');
    return lines.join('\n');
  });
  return [`Workflows (${items.length}):`, ...blocks].join('\n\n');
}

/** A workflow in full: the shown version's steps and built-in values, every version, its schedules and last fires. */
export function describeWorkflow(o: {
  workflow: StoredWorkflow;
  shown: WorkflowVersion;
  versions: readonly WorkflowVersion[];
  schedules: readonly StoredSchedule[];
  fires: readonly StoredFire[];
  params: readonly string[];
}): string {
  const { workflow: w, shown } = o;
  const zone = fireZone(o.schedules);
  const which = shown.version === w.version ? 'current' : `the current version is ${w.version}`;
  const lines = [
    `Workflow ${w.name}, version ${shown.version} (${which}): ${REVIEW[w.review]}; owner ${person(w.owner)}; approved at ${shown.risk} risk.`,
    `Plan: ${cut(shown.plan.summary, 300)}`,
    'Steps:',
    ...shown.plan.steps.map((s, i) => `  ${i + 1}. ${stepLine(s)}`),
  ];
  if (shown.plan.steps.length === 0) lines.push('  (none)');
  lines.push(`Built-in values it uses: ${o.params.length > 0 ? cut(o.params.join(', '), 300) : 'none'}`);
  lines.push(`Versions (times in ${zone}):`);
  const older = Math.max(0, o.versions.length - VERSIONS_SHOWN);
  if (older > 0) lines.push(`  … ${older} older (workflow ${w.name} version <n> shows one)`);
  for (const v of o.versions.slice(older)) {
    const current = v.version === w.version ? ' (current)' : '';
    lines.push(`  version ${v.version}${current}, ${when(v.createdAt, zone)}: ${cut(v.note, 160)}`);
  }
  lines.push('Schedules:');
  o.schedules.forEach((s, i) => lines.push(`  ${i + 1}. ${scheduleWhen(s)} (${policies(s)}), ${nextFire(s)}`));
  if (o.schedules.length === 0) lines.push(`  none (add one with: schedule ${w.name} "0 9 * * MON" Europe/Berlin)`);
  lines.push(o.fires.length > 0 ? `Last fires, newest first (times in ${zone}):` : 'Not fired yet.');
  for (const f of o.fires.slice(0, FIRES_SHOWN)) lines.push(`  ${fireLine(f, zone)}`);
  return lines.join('\n');
}

/** The answer to a new schedule: its expression, zone and policies in words, and its next fire times. */
export function describeScheduled(name: string, schedule: StoredSchedule, next: readonly Date[]): string {
  const times = next.map((d) => when(d, schedule.timeZone));
  const ahead = times.length > 0 ? ` Next: ${times.join(', ')}.` : ' It has no fire times ahead.';
  const paused = schedule.paused ? ' It is paused.' : '';
  return `Scheduled ${name}: ${scheduleWhen(schedule)} (${policies(schedule)}).${ahead}${paused}`;
}

/** One fire in a line: its scheduled time (in `timeZone`, named), version, outcome, lateness and run status. */
export function describeFire(fire: StoredFire, timeZone: string): string {
  return fireLine(fire, timeZone, ` ${timeZone}`);
}

function fireLine(f: StoredFire, zone: string, zoneName = ''): string {
  const scheduled = when(f.scheduledAt, zone);
  const head = f.scheduleId === null ? `${scheduled}${zoneName} (run now)` : `${scheduled}${zoneName}`;
  const at = startedAt(f, zone);
  const note = f.note ? `: ${cut(f.note, 200)}` : '';
  const outcome = {
    started: f.scheduleId === null ? 'started a run' : `started a run at ${at}`,
    held: `held for review at ${at}${note}`,
    failed: `could not run${note}`,
    skipped_missed: `skipped as missed${note}`,
    skipped_overlap: `skipped, the previous fire was still running${note}`,
    skipped_limit: `skipped, over the limit of fires a day${note}`,
  }[f.outcome];
  const run = f.runStatus ? `; run ${describeStatus(f.runStatus)}` : '';
  return `${head}, version ${f.version}: ${outcome}${run}`;
}

/** When a fire was handled, with its lateness; the date only when it differs from the scheduled one. */
function startedAt(f: StoredFire, zone: string): string {
  const scheduled = when(f.scheduledAt, zone);
  const started = when(f.startedAt, zone);
  const day = scheduled.slice(0, scheduled.lastIndexOf(' '));
  const time = started.startsWith(`${day} `) ? started.slice(day.length + 1) : started;
  return `${time} (${lateness(f.startedAt.getTime() - f.scheduledAt.getTime())})`;
}

function lateness(ms: number): string {
  if (ms < 1000) return 'on time';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s late`;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min late`;
  if (minutes >= 48 * 60) return `${Math.round(minutes / 1440)} days late`;
  return minutes % 60 === 0 ? `${minutes / 60} h late` : `${Math.floor(minutes / 60)} h ${minutes % 60} min late`;
}

function stepLine(s: Step): string {
  const after = s.dependsOn.length > 0 ? ` (after ${cut(s.dependsOn.join(', '), 200)})` : '';
  const optional = s.optional ? ' (optional)' : '';
  const does =
    s.kind === 'tool'
      ? `${cut(s.tool, 100)} ${cut(JSON.stringify(s.args), 200)}`
      : s.kind === 'llm'
        ? `model call ${cut(JSON.stringify(s.args), 200)}`
        : `if ${cut(s.expression, 200)} then ${cut(s.ifTrue.join(', '), 200) || 'nothing'}, else ${cut(s.ifFalse.join(', '), 200) || 'nothing'}`;
  return `${s.id}${after}${optional}: ${does}`;
}

function scheduleWhen(s: StoredSchedule): string {
  return `\`${cut(s.cron, 100)}\` in ${cut(s.timeZone, 64)}`;
}

function policies(s: StoredSchedule): string {
  const missed = s.catchUp === 'once' ? 'run once if less than a period late' : 'skipped';
  const overlapping = s.overlap === 'skip' ? 'skipped' : 'queued until the running one ends';
  return `missed fires: ${missed}; overlapping fires: ${overlapping}`;
}

function nextFire(s: StoredSchedule): string {
  if (s.paused) return 'paused';
  return s.nextFireAt ? `next ${when(s.nextFireAt, s.timeZone)}` : 'no fire times ahead';
}

function fireZone(schedules: readonly StoredSchedule[]): string {
  return schedules[0]?.timeZone ?? 'UTC';
}

/** An instant in a zone; in UTC, said so, if this machine's time zone data does not know the zone. */
function when(at: Date, zone: string): string {
  try {
    return zoneShort(at, zone);
  } catch {
    return `${zoneShort(at, 'UTC')} UTC`;
  }
}

function person(a: Actor): string {
  return cut(a.name ?? a.id, 80);
}

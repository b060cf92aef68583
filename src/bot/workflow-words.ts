/**
 * Workflow commands as every channel sees them (pure): which typed lines are workflow commands, the short help the
 * channels list, and the text a "Save as workflow" form turns into. The words themselves are the engine's
 * (`engine/workflow/workflow-commands.ts`); the channels only route them to `InboundHandler.workflowCommand`.
 */

/** The workflow commands, one short line each (form, then what it does), for the channels' help. */
export const WORKFLOW_HELP_LINES: readonly { form: string; what: string }[] = [
  { form: 'save <name> [every-fire]', what: 'save the last approved run here as a workflow' },
  { form: 'workflows', what: 'your workflows, their schedules and next fires' },
  { form: 'workflow <name> [run|delete|…]', what: 'show a workflow, run it now, or change it' },
  { form: 'fork <name> <new name>', what: 'copy a workflow under a new name' },
  {
    form: 'schedule <name> "<cron>" [<time zone>]',
    what: 'run it on a schedule ("pause", "resume" or "delete" instead of the cron)',
  },
];

/** The most characters a workflow's name takes (the engine refuses longer ones; the forms stop there). */
export const WORKFLOW_NAME_MAX = 40;

/** The command a "Save as workflow" form sends: `save <name>`, with `every-fire` when each fire must be approved. */
export function saveCommandText(name: string, everyFire: boolean): string {
  return `save ${name.trim()}${everyFire ? ' every-fire' : ''}`;
}

/** Whether a name typed into a "Save as workflow" form is one word (the engine judges the rest and says why). */
export function isOneWord(name: string): boolean {
  return /^\S+$/.test(name.trim());
}

/** The private answer when someone who may not decide on a run presses its "Save as workflow". */
export const SAVE_NOT_ALLOWED = 'Only the person who asked for this run or an approver can save it as a workflow.';

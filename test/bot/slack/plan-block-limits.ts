/**
 * The fields and limits of the `plan` and `task_card` blocks, for the fake Slack server and the renderer's tests.
 * Fields, required ones and status values are from Slack's reference (docs.slack.dev block-kit plan-block and
 * task-card-block), which states no counts or lengths; the numbers come from SDK documentation of the same
 * blocks: at most 50 tasks with unique ids in a plan (slack-morphism), details and output each one rich_text of
 * one element (slack-messaging), at most 256 characters of details or output (Slack task update chunks).
 * They are written here, not taken from the renderer, so the two cannot drift together.
 */

type Obj = Record<string, unknown>;

const MAX_TASKS = 50;
const TASK_TEXT = 256;
const STATUSES = new Set(['pending', 'in_progress', 'complete', 'error']);

/** Problems with one plan block at `at` (empty when fine), and the characters of text it carries. */
export function planBlockProblems(b: Obj, at: string): { problems: string[]; textLength: number } {
  const problems: string[] = [];
  let textLength = 0;
  if (typeof b.title !== 'string' || !b.title) problems.push(`${at}/title: must be a non-empty string`);
  const tasks = b.tasks === undefined ? [] : b.tasks;
  if (!Array.isArray(tasks)) return { problems: [...problems, `${at}/tasks: must be an array`], textLength };
  if (tasks.length > MAX_TASKS) problems.push(`${at}/tasks: no more than ${MAX_TASKS} items allowed`);
  const ids = new Set<string>();
  tasks.forEach((raw, i) => {
    const where = `${at}/tasks/${i}`;
    const found = taskCardProblems(raw as Obj, where);
    problems.push(...found.problems);
    textLength += found.textLength;
    const id = (raw as Obj).task_id;
    if (typeof id === 'string' && ids.has(id)) problems.push(`${where}/task_id: not unique in the plan`);
    if (typeof id === 'string') ids.add(id);
  });
  return { problems, textLength };
}

/** Problems with one task card at `at` (in a plan, or a block of its own). */
export function taskCardProblems(t: Obj, at: string): { problems: string[]; textLength: number } {
  const problems: string[] = [];
  let textLength = 0;
  if (t.type !== undefined && t.type !== 'task_card') problems.push(`${at}/type: must be task_card`);
  if (typeof t.task_id !== 'string' || !t.task_id) problems.push(`${at}/task_id: must be a non-empty string`);
  if (typeof t.title !== 'string' || !t.title) problems.push(`${at}/title: must be a non-empty string`);
  if (t.status !== undefined && !(typeof t.status === 'string' && STATUSES.has(t.status)))
    problems.push(`${at}/status: must be one of ${[...STATUSES].join(', ')}`);
  for (const key of ['details', 'output']) {
    if (t[key] === undefined) continue;
    const text = richTextOf(t[key] as Obj);
    if (text === null) problems.push(`${at}/${key}: must be one rich_text holding one element of text`);
    else if (text.length > TASK_TEXT) problems.push(`${at}/${key}: at most ${TASK_TEXT} characters`);
    else textLength += text.length;
  }
  return { problems, textLength };
}

/** The text of a rich_text that holds exactly one section of non-empty text elements; null when it does not. */
function richTextOf(r: Obj): string | null {
  const elements = r.elements;
  if (r.type !== 'rich_text' || !Array.isArray(elements) || elements.length !== 1) return null;
  const section = elements[0] as Obj;
  if (section.type !== 'rich_text_section' || !Array.isArray(section.elements) || section.elements.length === 0)
    return null;
  let text = '';
  for (const e of section.elements as Obj[]) {
    if (e.type !== 'text' || typeof e.text !== 'string' || !e.text) return null;
    text += e.text;
  }
  return text;
}

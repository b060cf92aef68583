/**
 * The plan shapes of the matrix, written as the planner writes them (compact JSON) over the audit server's tools,
 * and the fake model's script for a cell. Each shape has a `think` step (an llm step) whose answer waits for the
 * cell's gate, so actions taken "while it runs" find the run running, and a `tail` step after it: the part a
 * steering action changes or must keep from running.
 */
import { byRole, type FakeReply, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import type { Cell, Shape } from './matrix.ts';

/** The step after the gate: its id, the audit tool it calls, and the argument the actions change. */
export interface Tail {
  id: string;
  tool: string;
  field: string;
  /** The value as planned, after `amend`, and after `edit`. */
  planned: string;
  amended: string;
  edited: string;
}

const words = { planned: 'tail', amended: 'amended', edited: 'edited' };
const mail = { planned: 'tail@example.com', amended: 'amended@example.com', edited: 'edited@example.com' };

/** The tail of each shape. */
export const TAILS: Record<Shape, Tail> = {
  readOnly: { id: 'b', tool: 'lookup', field: 'answer', ...words },
  readThenWrite: { id: 'w', tool: 'note', field: 'text', ...words },
  fanOut: { id: 'w', tool: 'note', field: 'text', ...words },
  chain: { id: 'w', tool: 'note', field: 'text', ...words },
  held: { id: 's', tool: 'send', field: 'to', ...mail },
  delegate: { id: 'w', tool: 'note', field: 'text', ...words },
};

const lookup = (id: string, answer: unknown, after: string[] = []) => ({
  id,
  tool: 'audit.lookup',
  args: { answer },
  after,
});
const note = (id: string, text: string, after: string[] = []) => ({ id, tool: 'audit.note', args: { text }, after });
const think = (after: string[]) => ({ id: 'think', llm: 'Think about what was found.', after });
const ref = (id: string) => ({ $ref: `steps.${id}.output.content[0].text` });

/** The steps of a shape, with the tail's argument set to `value`. */
export function shapeSteps(shape: Shape, value: string): unknown[] {
  switch (shape) {
    case 'readOnly':
      return [lookup('a', 'one'), think(['a']), lookup('b', value, ['think'])];
    case 'readThenWrite':
      return [lookup('a', 'one'), think(['a']), note('w', value, ['think'])];
    case 'fanOut':
      // Three writes to one server with no maxConcurrency: they run one at a time (issue 29), so a Stop or Pause
      // meets one in flight and the others waiting, never sent. Written as the planner writes calls of one tool side
      // by side since issue 31, a fan-out ("each"), whose calls take the ids s1 to s3: every steering action meets it.
      return [
        { tool: 'audit.note', each: ['x', 'y', 'z'].map((text) => ({ text })) },
        think(['s1', 's2', 's3']),
        note('w', value, ['think']),
      ];
    case 'chain':
      return [lookup('a', 'one'), lookup('b', ref('a'), ['a']), think(['b']), note('w', value, ['think'])];
    case 'held':
      return [
        lookup('a', 'ada'),
        think(['a']),
        // Its body comes from the llm step, which runs only after approval: nobody has seen the value when the plan
        // is approved, so the data-flow guard holds the send mid-run with the value it would send.
        {
          id: 's',
          tool: 'audit.send',
          args: { to: value, body: { $ref: 'steps.think.output.text' } },
          after: ['think'],
        },
      ];
    case 'delegate':
      // The child run (ops) plans one lookup, which starts at once: its report is `d`'s output, before `think`.
      return [
        { id: 'd', tool: 'steward.delegate', args: { assistant: 'ops', task: SAID.task } },
        think(['d']),
        note('w', value, ['think']),
      ];
  }
}

/** Whether a shape's plan starts with a read-only closed-world lookup, which may start while the plan streams. */
export function startsWithLookup(shape: Shape): boolean {
  return shape === 'readOnly' || shape === 'readThenWrite' || shape === 'chain' || shape === 'held';
}

/**
 * Whether a cell's first lookup starts while its plan streams: not under review "all", and never for an Assistant
 * (its steps wait for the plan as a whole).
 */
export function startsEarly(cell: Pick<Cell, 'shape' | 'context'>): boolean {
  // A workflow's fire never plans: what it runs was saved.
  const planned = cell.context !== 'workflowFire';
  return planned && cell.context !== 'earlyStartOff' && cell.context !== 'assistant' && startsWithLookup(cell.shape);
}

/** A gate the `think` step's answer waits for. */
export interface Gate {
  open: () => void;
  readonly opened: Promise<void>;
}

/** A closed gate. */
export function createGate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** What a person types for each part of a cell: the request, the quick question, the other run's request. */
export const SAID = {
  request: 'Do the scenario work',
  quick: 'what time is it?',
  quickAnswer: 'It is noon.',
  other: 'keep watch for a minute',
  amend: 'make the last step say amended',
  /** The workflow saved from the cell's first run, and how its fires' runs are named. */
  workflow: 'scenario',
  fire: 'Workflow scenario v1: run now',
  report: 'The work is over.',
  /** What the delegate shape hands to ops, ops's plan's lookup, and the report ops gives back. */
  task: 'Look it up.',
  childLookup: 'child',
  childReport: 'Looked it up for the parent.',
};

/** Whether a model request is about the task handed to ops (its prompt starts with that request). */
const forChild = (text: string) => text.includes(`Request:\n${SAID.task}`);

/**
 * The model for a cell: the butler (quick answers) answers the quick question and hands every other request to the
 * planner; the planner writes the other run's plan, the cell's plan (first invalid, for `invalidFirstAnswer`; streamed
 * and held until the first lookup reached the server when steps may start early), and the amended plan.
 */
export function cellScript(cell: Cell, o: { gate: Gate; lookedUp: () => boolean }): FakeLlmScript {
  const plan = (value: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ steps: shapeSteps(cell.shape, value), summary: 'Do the scenario work', ...extra });
  const first = plan(TAILS[cell.shape].planned);
  // One wrong type in an optional field of the answer (after the steps, so steps may start before it is read); a
  // null there is the field left out, so it would not do.
  const invalid = plan(TAILS[cell.shape].planned, { risks: 'none' });
  const early = startsEarly(cell);
  const held = (text: string): FakeReply => (early ? heldUntil(text, '{"id":"think"', o.lookedUp) : text);
  const queue: FakeReply[] = [
    ...(cell.context === 'invalidFirstAnswer' ? [held(invalid), first] : [held(first)]),
    plan(TAILS[cell.shape].amended),
  ];
  let thoughts = 0;
  return byRole({
    // Earlier turns travel with a request: the newest thing asked decides (a quick question never needs a plan).
    butler: (req) =>
      lastAsked(req.lastUserText) === SAID.quick
        ? SAID.quickAnswer
        : { text: '', toolCalls: [{ id: 'call_1', name: 'plan_request', args: { reason: 'needs tools' } }] },
    planner: (req) => {
      if (forChild(req.lastUserText))
        return JSON.stringify({
          steps: [lookup('c', SAID.childLookup)],
          summary: 'Look it up',
        });
      // Under review "all" there are no quick answers: the planner answers the quick question itself.
      if (lastAsked(req.lastUserText) === SAID.quick)
        return JSON.stringify({ steps: [], summary: 'Tell the time', answer: SAID.quickAnswer });
      if (lastAsked(req.lastUserText) === SAID.other)
        return JSON.stringify({
          steps: [{ id: 'nap', tool: 'audit.sleep', args: { ms: 60_000 } }],
          summary: 'Keep watch',
        });
      const next = queue.shift();
      if (!next) throw new Error('no planner answer left for this cell');
      return next;
    },
    // A reply to a running run: a change asked for in words is an amendment, anything else asks how it goes.
    classifier: (req) => (req.lastUserText.includes(SAID.amend) ? 'amend' : 'status'),
    // The run a workflow is saved from thinks at once: only the fire's `think` waits for the gate.
    llm_step: async () => {
      if (cell.context !== 'workflowFire' || thoughts++ > 0) await o.gate.opened;
      return 'Thought it over.';
    },
    synthesizer: (req) => (forChild(req.lastUserText) ? SAID.childReport : SAID.report),
  });
}

/** Which of the things a person says in a cell comes last in a prompt. */
function lastAsked(text: string): string | undefined {
  const at = [SAID.quick, SAID.request, SAID.other].map((t) => [t, text.lastIndexOf(t)] as const);
  return at.filter(([, i]) => i >= 0).sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** A streamed answer cut before `cutAt`, whose second piece is sent once `until` holds. */
function heldUntil(text: string, cutAt: string, until: () => boolean): FakeReply {
  const k = text.indexOf(cutAt);
  if (k < 0) throw new Error(`${cutAt} is not in the plan`);
  const beforeChunk = async (i: number) => {
    if (i === 1)
      await waitUntil('the first lookup to reach the server while the plan streams', until, { timeoutMs: 10_000 });
  };
  return { text, chunks: [text.slice(0, k), text.slice(k)], beforeChunk };
}

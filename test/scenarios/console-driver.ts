/**
 * Performs one matrix cell on the console, as a person types it: sets up what else is in play, drives the plan to
 * the point of decision, takes the action, and returns what the oracle should judge plus what the context itself
 * requires (an ordinary first card after early start, one repair call, a card shown once after a restart).
 */
import type { StoredRun } from '../../src/engine/ports.ts';
import { isTerminal } from '../../src/engine/types.ts';
import { waitUntil } from '../helpers/wait.ts';
import { startConsoleStage, type ConsoleStage } from './console-stage.ts';
import { decisionPoint, type Cell } from './matrix.ts';
import { expectationFor, judge, type Observation } from './oracle.ts';
import { cellScript, createGate, SAID, startsWithLookup, TAILS } from './plans.ts';

const actor = { id: 'ada', name: 'ada', channel: 'console' };
const CARD = /=== Plan \(revision (\d+), risk \w+\) ===[^]*?\nType "approve"[^\n]*\n/g;
const MOVING: readonly string[] = ['planning', 'running', 'stopping'];
const REPORT = /=== Report \((\w+)\) ===/;

/** Runs a cell on its own console stage; resolves with what fell short (empty: the cell passes). */
export async function runConsoleCell(cell: Cell): Promise<string[]> {
  const gate = createGate();
  // The script needs to see the server before the stage exists (the plan is held until the first lookup arrives).
  const box: { stage?: ConsoleStage } = {};
  const calls = () => box.stage!.audit.entries().filter((e) => e.type === 'call');
  const lookedUp = () =>
    calls().some((e) => e.name === 'lookup' && e.args?.['answer'] === (cell.shape === 'held' ? 'ada' : 'one'));
  const stage = (box.stage = await startConsoleStage(cellScript(cell, { gate, lookedUp })));
  try {
    const problems = await withDeadline(drive(stage, cell, gate.open, calls), stage);
    if (problems.length > 0 && process.env.STEWARD_SCENARIOS_VERBOSE) problems.push(`console:\n${stage.output()}`);
    return problems;
  } finally {
    gate.open();
    await stopWhatIsLeft(stage);
    await stage.close();
  }
}

async function drive(
  s: ConsoleStage,
  cell: Cell,
  openGate: () => void,
  calls: () => { name: string; args?: Record<string, unknown> }[],
): Promise<string[]> {
  const problems: string[] = [];
  const tail = TAILS[cell.shape];
  const values = new Set([tail.planned, tail.amended, tail.edited]);
  const tailValues = () =>
    calls()
      .filter((e) => e.name === tail.tool && values.has(String(e.args?.[tail.field])))
      .map((e) => String(e.args?.[tail.field]));
  const at = decisionPoint(cell);

  // What else is in play, set up as a person would.
  if (cell.context === 'earlyStartOff') await s.type('review all');
  if (cell.context === 'quickAnswerBefore') {
    await s.type(SAID.quick);
    await s.waitFor(/It is noon\./);
  }
  if (cell.context === 'secondActiveRun') {
    await s.type(`new ${SAID.other}`);
    await waitUntil('the other run to be running', () => calls().some((e) => e.name === 'sleep'));
  }
  const from = s.output().length;
  await s.type(cell.context === 'secondActiveRun' ? `new ${SAID.request}` : SAID.request);
  const run = await waitUntil('the cell run to be stored', () => cellRun(s));
  const thinking = () =>
    waitUntil('the think step to be running', () => s.llm.requests.some((r) => r.role === 'llm_step'));

  // The point of decision: the review card (checked as the context requires), else the running plan.
  if (at !== 'running') {
    const card = await nextCard(s, from);
    if (cell.context === 'invalidFirstAnswer') {
      const planners = s.llm.requests.filter((r) => r.role === 'planner').length;
      if (planners !== 2) problems.push(`the invalid first answer took ${planners} planner call(s), expected 1 repair`);
    }
    if (cell.context !== 'earlyStartOff' && startsWithLookup(cell.shape)) {
      if (!/Type "approve", "amend/.test(card))
        problems.push('after early start, the first card is not an ordinary review card with Amend');
      if (!/\[a\] audit\.lookup .*✔ succeeded/.test(card))
        problems.push('after early start, the first card does not show the read step done');
    }
    if (cell.context === 'earlyStartOff' && calls().length > 0)
      problems.push('a tool was called before approval under review "all"');
    if (cell.context === 'restartBeforeDecision') {
      const mark = s.output().length;
      await s.restart();
      await nextCard(s, mark);
      const again = s.output().slice(mark);
      if ((again.match(/=== Plan \(/g) ?? []).length !== 1)
        problems.push('after a restart the card came back more than once');
      if (/riskier than what was approved|started at once/.test(again))
        problems.push('the card restored after a restart says "riskier than approved" or "started at once"');
    }
  } else if (cell.context === 'invalidFirstAnswer') {
    await thinking();
    const planners = s.llm.requests.filter((r) => r.role === 'planner').length;
    if (planners !== 2) problems.push(`the invalid first answer took ${planners} planner call(s), expected 1 repair`);
  }

  const review = ['approve', 'amend', 'edit', 'cancel', 'breakpoint'].includes(cell.action);
  // A held step's card comes after the plan's own: approve that first (open the gate so the run reaches the hold).
  if (at === 'hold') {
    const mark = s.output().length;
    await s.type('approve');
    if (review) {
      openGate();
      await nextCard(s, mark);
    }
  }
  if (at === 'card' && !review) await s.type('approve');
  if (at === 'running' || !review) await thinking();

  const callsAt = calls().length;
  let beforeLast: string[] = [];
  const last = async (line: string) => {
    beforeLast = tailValues();
    await s.type(line);
  };
  const approveHold = async (mark: number) => {
    if (cell.shape !== 'held') return;
    await nextCard(s, mark);
    await s.type('approve');
  };
  const ending = async (mark: number) => (await s.waitFor(REPORT, mark, 20_000), undefined);
  const mark = s.output().length;
  switch (cell.action) {
    case 'approve':
      await last('approve');
      openGate();
      await ending(mark);
      break;
    case 'amend':
    case 'edit': {
      if (cell.action === 'amend') await s.type(`amend ${SAID.amend}`);
      else
        await s.type(
          `edit ${JSON.stringify({ steps: edited((await s.store.getRun(run.id))!, tail.id, tail.field, tail.edited) })}`,
        );
      await s.waitFor(/=== Plan \(revision 1,/, mark);
      beforeLast = tailValues();
      if (at !== 'running') await s.type('approve');
      openGate();
      await ending(mark);
      break;
    }
    case 'cancel':
      await s.type('cancel');
      openGate();
      await waitUntil('the run to end', async () => isTerminal((await s.store.getRun(run.id))!.status));
      break;
    case 'breakpoint': {
      const step = at === 'card' ? 'think' : tail.id;
      await s.type(`break ${step}`);
      if (at !== 'running') await s.type('approve');
      openGate();
      await s.waitFor(new RegExp(`=== Breakpoint after ${step} ===`), mark);
      await last('continue');
      await ending(mark);
      break;
    }
    case 'pause':
    case 'resume':
      await s.type('pause');
      openGate();
      await waitUntil('the run to be paused', async () => (await s.store.getRun(run.id))!.status === 'paused');
      await waitUntil('think to end', async () =>
        (await s.store.listStepAttempts(run.id)).some((a) => a.stepId === 'think' && a.endedAt),
      );
      if (cell.action === 'pause') break;
      await last('resume');
      await approveHold(mark);
      await ending(mark);
      break;
    case 'stop':
      await s.type('stop');
      openGate();
      await ending(mark);
      break;
    case 'status':
    case 'history':
      await s.type(cell.action === 'status' ? 'how is it going?' : 'history');
      await s.waitFor(cell.action === 'status' ? /Run running/ : /History of/, mark);
      openGate();
      await approveHold(mark);
      await ending(mark);
      break;
    case 'new':
      await s.type(`new ${SAID.quick}`);
      await s.waitFor(/It is noon\./, mark);
      await s.type('stop');
      openGate();
      await ending(mark);
      break;
  }
  // The story is told once the cell's run rests (another active run may go on: idle() would wait for it too).
  await waitUntil('the cell run to rest', async () => !MOVING.includes((await s.store.getRun(run.id))!.status));
  const shown = s.output().slice(from);
  const observed: Observation = {
    status: (await s.store.getRun(run.id))!.status,
    tailValues: tailValues(),
    tailValuesBeforeLast: beforeLast,
    callsAfter: cell.action === 'new' ? 0 : calls().length - callsAt,
    shown,
    reports: (shown.match(/=== Report \(/g) ?? []).length,
  };
  if (
    cell.context === 'secondActiveRun' &&
    calls().some((e) => e.name === 'sleep') &&
    (await otherRun(s))?.status !== 'running'
  )
    problems.push('the other active run was touched by an action on this one');
  return [...problems, ...judge(expectationFor(cell), observed)];
}

/** A cell that has not told its story in 40 s fails with what the console showed (the test's own limit is 60 s). */
async function withDeadline<T>(work: Promise<T>, s: ConsoleStage): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void statuses(s).then((runs) =>
        reject(new Error(`the cell took over 40 s (runs: ${runs}); console so far:\n${s.output()}`)),
      );
    }, 40_000);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each run's request and status, for a failure's message. */
async function statuses(s: ConsoleStage): Promise<string> {
  const rows = await s.db.db.selectFrom('runs').select(['request', 'status']).execute();
  return rows.map((r) => `${r.request}: ${r.status}`).join(', ');
}

/** The next card printed after `from` characters, whole. */
async function nextCard(s: ConsoleStage, from: number): Promise<string> {
  return s.waitFor(new RegExp(CARD.source), from, 10_000);
}

/** The cell's run (the one for the scenario request), once stored. */
async function cellRun(s: ConsoleStage): Promise<StoredRun | null | undefined> {
  const rows = await s.db.db.selectFrom('runs').select(['id', 'request']).execute();
  const row = rows.find((r) => r.request === SAID.request);
  return row ? s.store.getRun(row.id) : undefined;
}

async function otherRun(s: ConsoleStage): Promise<StoredRun | null | undefined> {
  const rows = await s.db.db.selectFrom('runs').select(['id', 'request']).execute();
  const row = rows.find((r) => r.request === SAID.other);
  return row ? s.store.getRun(row.id) : undefined;
}

/** The run's stored steps with one argument of one step changed: what a person's edit sends. */
function edited(run: StoredRun, stepId: string, field: string, value: string): unknown[] {
  return run.plan!.steps.map((step) =>
    step.id === stepId && step.kind === 'tool' ? { ...step, args: { ...step.args, [field]: value } } : step,
  );
}

/** Stops every run still active (the clean-up, not part of the story): through the engine, since the story is told. */
async function stopWhatIsLeft(s: ConsoleStage): Promise<void> {
  const rows = await s.db.db.selectFrom('runs').select(['id']).execute();
  for (const { id } of rows) {
    const run = await s.store.getRun(id);
    if (!run || isTerminal(run.status)) continue;
    await s.steward.decision({ runId: id, revision: run.revision, action: 'stop', actor }).catch(() => undefined);
  }
  await Promise.race([s.steward.idle(), new Promise((r) => setTimeout(r, 3000))]);
}

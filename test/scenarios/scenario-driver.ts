/**
 * Performs one matrix cell through a person on a channel: sets up what else is in play, drives the plan to the point
 * of decision, takes the action, and judges what happened against the oracle, plus what the context itself requires
 * (an ordinary first card after early start, one repair call, the card shown once after a restart).
 */
import type { StoredRun } from '../../src/engine/ports.ts';
import { isTerminal } from '../../src/engine/types.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { decisionPoint, DELEGATE_CHILD, REVIEW_ACTIONS, type Cell } from './matrix.ts';
import { expectationFor, judge, type Observation } from './oracle.ts';
import type { Mark, Person } from './person.ts';
import { cellScript, createGate, SAID, startsEarly, TAILS } from './plans.ts';

const MOVING: readonly string[] = ['planning', 'running', 'stopping'];
/** The MCP calls the server received, from the cell's run on (`skip` starts them afresh, after a setting-up run). */
type Calls = (() => { name: string; args?: Record<string, unknown> }[]) & { skip: () => void };

/** Runs a cell on a fresh stage of a channel; resolves with what fell short (empty: the cell passes). */
export async function runCell(
  cell: Cell,
  start: (script: FakeLlmScript, cell: Cell) => Promise<Person>,
): Promise<string[]> {
  const gate = createGate();
  // The script needs to see the server before the stage exists (the plan is held until the first lookup arrives).
  const box: { person?: Person } = {};
  let skipped = 0;
  const all = () => box.person!.audit.entries().filter((e) => e.type === 'call');
  const calls: Calls = Object.assign(() => all().slice(skipped), { skip: () => void (skipped = all().length) });
  const first = cell.shape === 'held' ? 'ada' : 'one';
  const lookedUp = () => calls().some((e) => e.name === 'lookup' && e.args?.['answer'] === first);
  const person = (box.person = await start(cellScript(cell, { gate, lookedUp }), cell));
  try {
    const problems = await withDeadline(drive(person, cell, gate.open, calls), person);
    if (problems.length > 0 && process.env.STEWARD_SCENARIOS_VERBOSE) problems.push(`shown:\n${person.transcript(0)}`);
    return problems;
  } finally {
    gate.open();
    await stopWhatIsLeft(person);
    await person.close();
  }
}

async function drive(p: Person, cell: Cell, openGate: () => void, calls: Calls): Promise<string[]> {
  const problems: string[] = [];
  const tail = TAILS[cell.shape];
  const values = new Set([tail.planned, tail.amended, tail.edited]);
  const tailValues = () =>
    calls()
      .filter((e) => e.name === tail.tool && values.has(String(e.args?.[tail.field])))
      .map((e) => String(e.args?.[tail.field]));
  const at = decisionPoint(cell);
  // The cell run's planner calls: not the one asked beside the front desk for a `new` quick question (it is dropped).
  const planners = () =>
    p.llm.requests.filter((r) => r.role === 'planner' && !r.lastUserText.includes(SAID.quick)).length;
  const thoughts = () => p.llm.requests.filter((r) => r.role === 'llm_step').length;

  // What else is in play, set up as a person would.
  if (cell.context === 'earlyStartOff') await p.reviewAll();
  if (cell.context === 'quickAnswerBefore') await p.askQuick();
  if (cell.context === 'secondActiveRun') await p.startOther();
  if (cell.context === 'assistant' || cell.shape === 'delegate') {
    if (!p.makeAssistant)
      throw new Error('this channel cannot set up an Assistant: the matrix should not have chosen this cell');
    await p.makeAssistant();
  }
  if (cell.context === 'workflowFire') await savedWorkflow(p, cell);
  calls.skip();
  const thoughtsBefore = thoughts();
  const plannersBefore = planners();
  const from = p.mark();
  if (cell.context === 'workflowFire') await p.fire!();
  else await p.ask(cell.context === 'secondActiveRun', cell.context === 'assistant' ? 'ops' : undefined);
  const request = cell.context === 'workflowFire' ? SAID.fire : SAID.request;
  const run = await waitUntil('the cell run to be stored', () => runOf(p, request));
  // Waits that give up at once when the run ended instead (a plan stopped as invalid never shows its card).
  const ended = async () => {
    const now = (await p.store.getRun(run.id))!.status;
    if (isTerminal(now)) throw new Error(`the run ended ${now} before it got there`);
  };
  const thinking = () =>
    orEnded(
      waitUntil('the think step to be running', () => thoughts() > thoughtsBefore),
      ended,
    );
  const card = (mark: Mark) => orEnded(p.card(mark), ended);

  // The point of decision: the review card (checked as the context requires), else the running plan.
  if (at !== 'running') {
    const firstCard = await card(from);
    if (startsEarly(cell)) {
      if (!p.offersAmend(firstCard))
        problems.push('after early start, the first card is not an ordinary review card with Amend');
      // The card may come while the early lookup is still in flight: then it says so (the card changes once it ends).
      const shownDone = /\ba\b[^\n]*(✔|succeeded)|✅ \*{1,2}1\.\*{1,2} `a`/.test(firstCard);
      if (!shownDone && !/\ba started while the plan was written\b[^\n]*\(a still running\)/.test(firstCard))
        problems.push('after early start, the first card does not show the read step done or still running');
    }
    if (cell.context === 'earlyStartOff' && calls().length > 0)
      problems.push('a tool was called before approval under review "all"');
    if (cell.context === 'restartBeforeDecision') {
      if (!p.restart) throw new Error('this channel cannot restart: the matrix should not have chosen this cell');
      const mark = p.mark();
      await p.restart();
      await card(mark);
      if (p.cards(mark) !== 1) problems.push('after a restart the card came back more than once');
      if (/riskier than what was approved|started at once/.test(p.transcript(mark)))
        problems.push('the card restored after a restart says "riskier than approved" or "started at once"');
    }
  } else await thinking();
  if (cell.context === 'invalidFirstAnswer' && planners() !== 2)
    problems.push(`the invalid first answer took ${planners()} planner call(s), expected 1 repair`);
  if (cell.context === 'spendCapHeld' && at !== 'running' && !p.seen('spendHeld', from))
    problems.push('the card of a plan estimated past the spend cap does not say it waits for an approver');

  // The run's first approval. Past a spend cap the requester's Approve is refused, naming the cap, and the run keeps
  // waiting with nothing called; an approver's then starts it, noted as past the cap. Resolves with a mark taken just
  // before the approval that counted, so what follows it (a hold's card) is read from there.
  let capPassed = cell.context !== 'spendCapHeld';
  const firstApproval = async (): Promise<Mark> => {
    if (capPassed) {
      const before = p.mark();
      await p.approve();
      return before;
    }
    capPassed = true;
    const asked = p.mark();
    const callsBefore = calls().length;
    await p.approve();
    await p.waitSeen('spendRefused', asked);
    const status = (await p.store.getRun(run.id))!.status;
    if (status !== 'awaiting_review')
      problems.push(`the requester's Approve past the spend cap left the run ${status}`);
    if (calls().length > callsBefore) problems.push("a tool was called on the requester's refused Approve");
    const before = p.mark();
    await p.approveAsApprover();
    await p.waitSeen('approvedPastCap', before);
    return before;
  };

  // Under review "all" the run handed to ops has its own card to approve, once the parent's was approved.
  const approve = async () => {
    const before = await firstApproval();
    if (cell.shape !== 'delegate' || cell.context !== 'earlyStartOff') return;
    await p.waitSeen('card:child', before);
    await p.approve();
  };

  const review = REVIEW_ACTIONS.includes(cell.action);
  // A held step's card comes after the plan's own: approve that first (open the gate so the run reaches the hold).
  if (at === 'hold') {
    const mark = await firstApproval();
    if (review) {
      openGate();
      await card(mark);
    }
  }
  if (at === 'card' && !review) await approve();
  if (!review) await thinking();

  const callsAt = calls().length;
  // Calls already under way as the person acts (a lookup started while the plan streamed, still running at the card)
  // may reach the server a moment later: they were sent before the action, so they do not count as after it.
  const underWay = await callsUnderWay(p, run.id);
  let beforeLast: string[] = [];
  const mark = p.mark();
  const approveHold = async () => {
    if (cell.shape !== 'held') return;
    await card(mark);
    await p.approve();
  };
  switch (cell.action) {
    case 'approve':
      beforeLast = tailValues();
      await approve();
      openGate();
      await p.waitSeen('report:any', mark);
      break;
    case 'amend':
    case 'edit': {
      if (cell.action === 'amend') await p.amend(SAID.amend);
      else
        await p.edit(edited((await p.store.getRun(run.id))!, tail.id, tail.field, tail.edited), {
          stepId: tail.id,
          from: tail.planned,
          to: tail.edited,
        });
      await p.waitSeen('revision:1', mark);
      beforeLast = tailValues();
      if (at !== 'running') await approve();
      openGate();
      await p.waitSeen('report:any', mark);
      break;
    }
    case 'cancel':
      await p.cancel();
      openGate();
      await waitUntil('the run to end', async () => isTerminal((await p.store.getRun(run.id))!.status));
      break;
    case 'breakpoint': {
      const step = at === 'card' ? 'think' : tail.id;
      await p.breakpoint(step);
      if (at !== 'running') await approve();
      openGate();
      await p.waitSeen(`breakpoint:${step}`, mark);
      beforeLast = tailValues();
      await p.continueRun();
      await p.waitSeen('report:any', mark);
      break;
    }
    case 'pause':
    case 'resume':
      await p.pause();
      openGate();
      await waitUntil('the run to be paused', async () => (await p.store.getRun(run.id))!.status === 'paused');
      await waitUntil('think to end', async () =>
        (await p.store.listStepAttempts(run.id)).some((a) => a.stepId === 'think' && a.endedAt),
      );
      if (cell.action === 'pause') break;
      beforeLast = tailValues();
      await p.resume();
      await approveHold();
      await p.waitSeen('report:any', mark);
      break;
    case 'stop':
      await p.stop();
      openGate();
      await p.waitSeen('report:any', mark);
      break;
    case 'status':
    case 'history':
      if (cell.action === 'status') await p.askStatus();
      else await p.history();
      await p.waitSeen(cell.action, mark);
      openGate();
      await approveHold();
      await p.waitSeen('report:any', mark);
      break;
    case 'new':
      await p.newQuick();
      await p.waitSeen('quickAnswer', mark);
      await p.stop();
      openGate();
      await p.waitSeen('report:any', mark);
      break;
  }
  // The story is told once the cell's run rests (another active run may go on: idle() would wait for it too).
  await waitUntil('the cell run to rest', async () => !MOVING.includes((await p.store.getRun(run.id))!.status));
  const observed: Observation = {
    status: (await p.store.getRun(run.id))!.status,
    tailValues: tailValues(),
    tailValuesBeforeLast: beforeLast,
    callsAfter: cell.action === 'new' ? 0 : withoutUnderWay(calls().slice(callsAt), underWay).length,
    sees: (what, since) => p.seen(what, since === 'action' ? mark : from),
    reports: p.reports(from),
  };
  if (cell.context === 'secondActiveRun' && (await runOf(p, SAID.other))?.status !== 'running')
    problems.push('the other active run was touched by an action on this one');
  if (cell.shape === 'delegate') {
    const child = await runOf(p, SAID.task);
    const want = DELEGATE_CHILD[cell.action];
    if ((child?.status ?? 'none') !== want)
      problems.push(`the run handed to ops ended ${child?.status ?? 'never started'}, expected ${want}`);
  }
  if (cell.context === 'secondProcess') {
    if (!p.other)
      throw new Error('this channel cannot start a second process: the matrix should not have chosen this cell');
    // The run is this process's: the other one, only there, neither calls its tools nor shows its cards or report.
    if (p.other.calls() > 0) problems.push(`the second process made ${p.other.calls()} MCP call(s)`);
    if (p.other.showedRun()) problems.push("the second process's terminal showed a card or report of the run");
  }
  if (cell.context === 'workflowFire' && planners() - plannersBefore !== (cell.action === 'amend' ? 1 : 0))
    problems.push(`the fire took ${planners() - plannersBefore} planner call(s), expected none but an amendment's`);
  const expected = expectationFor(cell);
  if (cell.context === 'assistant' && expected.shows.some((s) => s.startsWith('report:'))) {
    // An Assistant's report is streamed as it is stored: shown once, and as the Assistant's.
    if (observed.reports !== 1)
      problems.push(`the Assistant's report was shown ${observed.reports} times, expected once`);
    if (!observed.sees('report:assistant', 'action')) problems.push("the report was not shown as the Assistant's");
  }
  return [...problems, ...judge(expected, observed)];
}

/**
 * The workflow a fire runs: the cell's request asked and run to completion as the person would (approved at its card
 * and at its hold where the shape has them), then saved, each fire waiting for approval.
 */
async function savedWorkflow(p: Person, cell: Cell): Promise<void> {
  if (!p.saveWorkflow || !p.fire)
    throw new Error('this channel cannot save a workflow: the matrix should not have chosen this cell');
  const from = p.mark();
  await p.ask(false);
  if (decisionPoint({ shape: cell.shape, context: 'earlyStartOn' }) !== 'running') {
    await p.card(from);
    const mark = p.mark();
    await p.approve();
    if (cell.shape === 'held') {
      await p.card(mark);
      await p.approve();
    }
  }
  await p.waitSeen('report:completed', from);
  await waitUntil('the first run to be completed', async () => (await runOf(p, SAID.request))?.status === 'completed');
  await p.saveWorkflow();
}

/** `wait`, unless `ended` throws first (checked every 50 ms); the wait's own failure is kept from going unhandled. */
async function orEnded<T>(wait: Promise<T>, ended: () => Promise<void>): Promise<T> {
  let settled = false;
  wait.catch(() => undefined).finally(() => (settled = true));
  while (!settled) {
    await ended();
    await Promise.race([wait.catch(() => undefined), new Promise((r) => setTimeout(r, 50))]);
  }
  return wait;
}

/** A cell that has not told its story in 40 s fails with what was shown (the test's own limit is 60 s). */
async function withDeadline<T>(work: Promise<T>, p: Person): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void statuses(p).then((runs) => reject(new Error(`the cell took over 40 s (runs: ${runs})`)));
    }, 40_000);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each run's request and status, for a failure's message. */
async function statuses(p: Person): Promise<string> {
  const rows = await p.db.db.selectFrom('runs').select(['request', 'status']).execute();
  return rows.map((r) => `${r.request}: ${r.status}`).join(', ');
}

/** The run for a request (a workflow's fire: whose request starts so), once stored. */
async function runOf(p: Person, request: string): Promise<StoredRun | null | undefined> {
  const rows = await p.db.db.selectFrom('runs').select(['id', 'request']).execute();
  const row = rows.find((r) => (request === SAID.fire ? r.request.startsWith(request) : r.request === request));
  return row ? p.store.getRun(row.id) : undefined;
}

/** The run's stored steps with one argument of one step changed: what a person's edit sends. */
function edited(run: StoredRun, stepId: string, field: string, value: string): unknown[] {
  return run.plan!.steps.map((step) =>
    step.id === stepId && step.kind === 'tool' ? { ...step, args: { ...step.args, [field]: value } } : step,
  );
}

/** Stops every run still active (the clean-up, not part of the story): through the engine, since the story is told. */
async function stopWhatIsLeft(p: Person): Promise<void> {
  const rows = await p.db.db.selectFrom('runs').select(['id']).execute();
  for (const { id } of rows) {
    const run = await p.store.getRun(id);
    if (!run || isTerminal(run.status)) continue;
    await p
      .steward()
      .decision({ runId: id, revision: run.revision, action: 'stop', actor: run.requester })
      .catch(() => undefined);
  }
  await Promise.race([p.steward().idle(), new Promise((r) => setTimeout(r, 3000))]);
}

/** The calls of the run's tool steps stored as running (their intent is stored before the call is sent). */
async function callsUnderWay(p: Person, runId: string): Promise<string[]> {
  const run = await p.store.getRun(runId);
  const tools = new Map((run?.plan?.steps ?? []).flatMap((s) => (s.kind === 'tool' ? [[s.id, s.tool]] : [])));
  return (await p.store.listStepAttempts(runId))
    .filter((a) => a.status === 'running' && tools.get(a.stepId)?.startsWith('audit.'))
    .map((a) => callKey(tools.get(a.stepId)!.slice('audit.'.length), a.args));
}

/** The calls received, less one for each call that was under way before the action. */
function withoutUnderWay<T extends { name: string; args?: unknown }>(received: T[], underWay: string[]): T[] {
  const left = [...underWay];
  return received.filter((c) => {
    const i = left.indexOf(callKey(c.name, c.args ?? {}));
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

const callKey = (tool: string, args: unknown) => `${tool} ${JSON.stringify(args)}`;

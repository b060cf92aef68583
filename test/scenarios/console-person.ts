/** A person at the console: every action is a line typed, every sight a line printed (test/scenarios/person.ts). */
import { waitUntil } from '../helpers/wait.ts';
import { startConsoleStage } from './console-stage.ts';
import type { Seen } from './oracle.ts';
import type { Person } from './person.ts';
import type { FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { SAID } from './plans.ts';
import type { Cell } from './matrix.ts';
import { CONSOLE_APPROVER } from './spend-held.ts';
import type { Steward } from '../../src/engine/flows/steward.ts';

/**
 * A report of the cell's run, read to its words (it streams): not the report ops gives back to a parent in the
 * delegate shape, which says other words.
 */
const report = (status: string) =>
  new RegExp(`=== Report \\(${status}\\) ===\\n(Report of the Assistant "ops":\\n)?${SAID.report}`);
const REPORT = report('\\w+');

const CARD = /=== Plan \(revision (\d+), risk \w+\) ===[^]*?\nType "approve"[^\n]*\n/;

/** How each thing the oracle names is printed on the console. */
const LOOKS: Record<string, RegExp> = {
  'report:completed': report('completed'),
  'report:stopped': report('stopped'),
  'report:any': REPORT,
  'report:assistant': new RegExp(`=== Report \\(\\w+\\) ===\\nReport of the Assistant "ops":\\n${SAID.report}`),
  'revision:1': /=== Plan \(revision 1,/,
  'card:child': /\(handed over by run \S+; its report goes back to that run\)\n[^]*?\nType "approve"/,
  'breakpoint:any': /=== Breakpoint after/,
  status: /Run running/,
  history: /History of "(Do the scenario work|Workflow scenario v1: run now)/,
  paused: /Paused/,
  quickAnswer: /It is noon\./,
  alreadyEnded: /This run has already ended/,
  invalidStopped: /turned out invalid/,
  spendHeld: /spend cap of \$5\.00: it waits for an approver/,
  spendRefused: /spend cap of \$5\.00: only an approver can approve it/,
  approvedPastCap: /Approved by Boss past the workspace's daily spend cap of \$5\.00/,
};

function looks(what: Seen): RegExp {
  const id = /^breakpoint:(?!any$)(.+)$/.exec(what)?.[1];
  return id ? new RegExp(`=== Breakpoint after ${id} ===`) : LOOKS[what]!;
}

/**
 * Where Ada is no approver (context spendCapHeld), Boss sets ops up at a terminal of their own: the same commands,
 * as Boss.
 */
async function bossSetsUpOps(steward: Steward): Promise<void> {
  for (const text of ['create ops "Operations"', 'ops grant audit allow', 'ops grant steward.delegate allow']) {
    const answer = await steward.assistantCommand({
      actor: CONSOLE_APPROVER,
      conversation: { channel: 'console', key: 'boss' },
      text: `assistant ${text}`,
    });
    if (answer.level !== 'info') throw new Error(`assistant ${text}: ${answer.text}`);
  }
}

/** Starts a console stage for a cell and the person at it. */
export async function consolePerson(script: FakeLlmScript, cell?: Cell): Promise<Person> {
  const capped = cell?.context === 'spendCapHeld';
  const s = await startConsoleStage(script, { secondProcess: cell?.context === 'secondProcess', spendCapHeld: capped });
  const other = s.other;
  const calls = () => s.audit.entries().filter((e) => e.type === 'call');
  let besides = false;
  return {
    llm: s.llm,
    audit: s.audit,
    db: s.db,
    store: s.store,
    steward: () => s.steward,
    other: other && {
      calls: () => other.calls.length,
      showedRun: () => /=== (Plan|Report) \(/.test(other.output()),
    },
    reviewAll: () => s.type('review all'),
    async askQuick() {
      await s.type(SAID.quick);
      await s.waitFor(LOOKS.quickAnswer!);
    },
    async startOther() {
      await s.type(`new ${SAID.other}`);
      await waitUntil('the other run to be running', () => calls().some((e) => e.name === 'sleep'));
    },
    async makeAssistant() {
      if (capped) return bossSetsUpOps(s.steward);
      await s.type('assistant create ops "Operations"');
      await s.type('assistant ops grant audit allow');
      // So that ops's own plan may hand work on (the delegate shape asked of ops): the depth brake stops a third.
      await s.type('assistant ops grant steward.delegate allow');
      await s.waitFor(/"ops": allow the tool steward\.delegate/);
    },
    async saveWorkflow() {
      await s.type(`save ${SAID.workflow}`);
      await s.waitFor(/Saved workflow "scenario" \(version 1\)/);
      await s.type(`workflow ${SAID.workflow} review every-fire`);
      await s.waitFor(/Each fire of "scenario" now waits for approval/);
    },
    fire: () => s.type(`workflow ${SAID.workflow} run`),
    async ask(others, assistant) {
      besides = others;
      const said = assistant ? `ask ${assistant}: ${SAID.request}` : SAID.request;
      await s.type(besides ? `new ${said}` : said);
    },
    mark: () => s.output().length,
    card: (from) => s.waitFor(CARD, from, 10_000),
    offersAmend: (card) => /Type "approve", "amend/.test(card),
    cards: (from) =>
      (
        s
          .output()
          .slice(from)
          .match(/=== Plan \(/g) ?? []
      ).length,
    waitSeen: async (what, from) => void (await s.waitFor(looks(what), from, 20_000)),
    seen: (what, from) => looks(what).test(s.output().slice(from)),
    reports: (from) => (s.output().slice(from).match(new RegExp(REPORT, 'g')) ?? []).length,
    transcript: (from) => s.output().slice(from),
    restart: () => s.restart(),
    approve: () => s.type('approve'),
    async approveAsApprover() {
      // Boss decides at a terminal of their own: the decision reaches the engine as a press by another person would.
      const waiting = await s.db.db
        .selectFrom('runs')
        .select('id')
        .where('status', '=', 'awaiting_review')
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow();
      const run = (await s.store.getRun(waiting.id))!;
      await s.steward.decision({ runId: run.id, revision: run.revision, action: 'approve', actor: CONSOLE_APPROVER });
    },
    amend: (text) => s.type(`amend ${text}`),
    edit: (steps) => s.type(`edit ${JSON.stringify({ steps })}`),
    cancel: () => s.type('cancel'),
    breakpoint: (id) => s.type(`break ${id}`),
    continueRun: () => s.type('continue'),
    pause: () => s.type('pause'),
    resume: () => s.type('resume'),
    stop: () => s.type('stop'),
    askStatus: () => s.type('how is it going?'),
    history: () => s.type('history'),
    newQuick: () => s.type(`new ${SAID.quick}`),
    close: () => s.close(),
  };
}

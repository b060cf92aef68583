/**
 * Questions MCP servers ask mid-call, carried out: a question that may be shown becomes a form on the run's thread
 * and waits for the requester or an approver, its deadline, or the call's end (a Stop); one that asks for a secret, or
 * cannot be a form, is declined at once and the thread told why. Every question and its end are stored with the step.
 * The rules (fields, secrets, entries, deadline, who may answer) are in `run/question-form.ts` and `run/run-actions.ts`.
 */
import type { QuestionReply } from '../channel.ts';
import type { QuestionCard } from '../messages.ts';
import type { Conversation, RunRecords } from '../ports.ts';
import { parseQuestionForm, questionDeadline, readQuestionAnswer, sensitiveFields } from '../run/question-form.ts';
import { mayDecide } from '../run/run-actions.ts';
import type {
  InboundQuestionAnswer,
  QuestionAnswer,
  QuestionCall,
  QuestionClose,
  QuestionLog,
  QuestionRequest,
  ServerQuestions,
  StoredQuestion,
} from '../server-questions.ts';
import { QUESTION_REFUSAL, RUN_STOPPED } from '../server-questions.ts';
import type { Actor } from '../types.ts';
import type { Log } from './deps.ts';
import type { RunMessages } from './run-messages.ts';

/** How long a question waits for an answer unless set (`STEWARD_QUESTION_TIMEOUT_SECONDS`). */
export const DEFAULT_QUESTION_TIMEOUT_MS = 10 * 60_000;

export type { QuestionReply } from '../channel.ts';

interface Open {
  card: QuestionCard;
  conversation: Conversation;
  /** `elsewhere`: the question was ended (and stored) by another process, which took the answer. */
  settle: (close: QuestionClose, answer: QuestionAnswer, elsewhere?: boolean) => void;
}

// How often a waiting question looks at its row, for an answer another process took (a press can reach any process).
const LOOK_MS = 1_000;

/** Asks people the questions servers send, and takes their answers. */
export class ServerQuestionFlow implements ServerQuestions {
  private readonly open = new Map<string, Open>();

  constructor(
    private readonly deps: {
      store: Pick<RunRecords, 'getRun' | 'appendEvent'>;
      questions: QuestionLog;
      clock: () => Date;
      newId: () => string;
      log: Log;
      approvers: readonly string[];
      timeoutMs: number;
    },
    private readonly messages: RunMessages,
  ) {}

  async ask(call: QuestionCall, request: QuestionRequest, signal: AbortSignal): Promise<QuestionAnswer> {
    const { store, questions, clock, newId } = this.deps;
    const run = await store.getRun(call.runId);
    if (!run) return { action: 'decline' };
    const askedAt = clock();
    const id = newId();
    const deadlineMs = questionDeadline(askedAt, this.deps.timeoutMs, call.callDeadline);
    const row = { id, runId: run.id, stepId: call.stepId, server: request.server, message: request.message };
    await questions.addQuestion({
      ...row,
      requestedSchema: request.requestedSchema,
      askedAt,
      deadlineAt: new Date(Math.max(deadlineMs, askedAt.getTime())),
    });
    const form = parseQuestionForm(request.requestedSchema);
    const secret = form.ok ? sensitiveFields(form.value) : [];
    const refused = !form.ok
      ? `it cannot be shown as a form: ${form.error}`
      : secret.length > 0
        ? `it asks for what looks like a secret (${secret.join(', ')}), and MCP servers must not ask for secrets in a form; give it to the server's own sign-in or settings instead`
        : deadlineMs <= askedAt.getTime()
          ? 'the step has no time left to wait for an answer'
          : undefined;
    if (refused || !form.ok) {
      const reason = refused ?? '';
      await questions.closeQuestion(id, { outcome: 'refused', reason }, clock());
      await this.messages.notice(
        run,
        'warning',
        `MCP server "${request.server}" asked a question during ${call.stepId}; Steward declined it for you because ${reason}.`,
      );
      return { action: 'decline' };
    }
    const card: QuestionCard = {
      kind: 'question',
      ...row,
      questionId: id,
      fields: form.value,
      requester: run.requester,
      deadline: new Date(deadlineMs),
    };
    return this.wait(card, run.conversation, deadlineMs - askedAt.getTime(), signal);
  }

  /** Shows the form and waits for its end: an answer, the deadline, or the call giving up. */
  private async wait(
    card: QuestionCard,
    conversation: Conversation,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<QuestionAnswer> {
    const { clock, log } = this.deps;
    let settle!: Open['settle'];
    const ended = new Promise<{ close: QuestionClose; answer: QuestionAnswer; elsewhere: boolean }>((resolve) => {
      settle = (close, answer, elsewhere = false) => resolve({ close, answer, elsewhere });
    });
    const open: Open = { card, conversation, settle };
    this.open.set(card.questionId, open);
    const timer = setTimeout(() => settle({ outcome: 'timedOut' }, { action: 'decline' }), waitMs);
    const look = setInterval(() => void this.lookElsewhere(card.questionId, settle), LOOK_MS);
    // The call gave up on it: a Stop of the run (the step's signal), the call's own timeout, or the server cancelling.
    const onAbort = () =>
      settle({ outcome: signal.reason === RUN_STOPPED ? 'stopped' : 'cancelled' }, { action: 'cancel' });
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    try {
      await this.messages.send(conversation, card).catch((err: unknown) => {
        log('warn', `run ${card.runId}: the question from ${card.server} was not shown: ${(err as Error).message}`);
        settle({ outcome: 'cancelled', reason: 'the form could not be shown' }, { action: 'cancel' });
      });
      const { close, answer, elsewhere } = await ended;
      // An answer stored already (here, by `answer`) wins; the deadline or a stop only ends what is still open.
      const first =
        elsewhere ||
        (await this.deps.questions.closeQuestion(card.questionId, close, clock()).catch((err: unknown) => {
          log('warn', `run ${card.runId}: question ${card.questionId} not stored as ended: ${(err as Error).message}`);
          return true;
        }));
      if (first) await this.closed(open, close);
      if (!first) return answerOf(await this.deps.questions.getQuestion(card.questionId).catch(() => null)) ?? answer;
      return answer;
    } finally {
      clearTimeout(timer);
      clearInterval(look);
      signal.removeEventListener('abort', onAbort);
      this.open.delete(card.questionId);
    }
  }

  /**
   * A person's answer from a channel: refused unless they are the requester or an approver, the question is open in
   * this process, and (to accept) every entry fits its field; otherwise stored and sent back to the server.
   */
  async answer(given: InboundQuestionAnswer): Promise<QuestionReply> {
    const open = this.open.get(given.questionId);
    const card = open?.card ?? (await this.storedCard(given.questionId));
    if (!card) return { ok: false, refusal: 'That question has ended already.' };
    const run = await this.deps.store.getRun(card.runId);
    if (!run || !mayDecide(run, given.actor, this.deps.approvers)) {
      return { ok: false, refusal: QUESTION_REFUSAL };
    }
    let close: QuestionClose = { outcome: 'declined', by: given.actor };
    let answer: QuestionAnswer = { action: 'decline' };
    if (given.action === 'accept') {
      const read = readQuestionAnswer(card.fields, given.values ?? {});
      if (!read.ok) {
        const fields = Object.fromEntries(read.error.map((e) => [e.field, e.problem]));
        return { ok: false, refusal: read.error.map((e) => `${e.label}: ${e.problem}`).join('; '), fields };
      }
      close = { outcome: 'accepted', by: given.actor, content: read.value };
      answer = { action: 'accept', content: read.value };
    }
    if (open) return this.settle(open, close, answer);
    // Asked by a call in another process: stored here, where that process looks for it and answers the server.
    const first = await this.deps.questions.closeQuestion(card.questionId, close, this.deps.clock());
    return first ? { ok: true } : { ok: false, refusal: 'That question has ended already.' };
  }

  /** The form of an open question (asked here, or by another process), for a channel about to show it; else null. */
  async card(questionId: string): Promise<QuestionCard | null> {
    return this.open.get(questionId)?.card ?? (await this.storedCard(questionId));
  }

  /** An open question asked by a call in another process, as its card, from its row; null when it has ended. */
  private async storedCard(questionId: string): Promise<QuestionCard | null> {
    const q = await this.deps.questions.getQuestion(questionId);
    if (!q || q.outcome !== null || q.deadlineAt.getTime() <= this.deps.clock().getTime()) return null;
    const run = await this.deps.store.getRun(q.runId);
    const form = parseQuestionForm(q.requestedSchema);
    if (!run || !form.ok) return null;
    const { runId, stepId, server, message } = q;
    const fields = form.value;
    return {
      kind: 'question',
      runId,
      questionId,
      stepId,
      server,
      message,
      fields,
      requester: run.requester,
      deadline: q.deadlineAt,
    };
  }

  /** Ends a waiting question that another process stored as answered. Never throws. */
  private async lookElsewhere(questionId: string, settle: Open['settle']): Promise<void> {
    const q = await this.deps.questions.getQuestion(questionId).catch(() => null);
    const answer = answerOf(q);
    if (!q?.outcome || !answer) return;
    const by: { by?: Actor } = q.answeredBy ? { by: q.answeredBy } : {};
    settle({ outcome: q.outcome, ...by }, answer, true);
  }

  private async settle(open: Open, close: QuestionClose, answer: QuestionAnswer): Promise<QuestionReply> {
    const first = await this.deps.questions.closeQuestion(open.card.questionId, close, this.deps.clock());
    if (!first) return { ok: false, refusal: 'That question has ended already.' };
    await this.closed(open, close);
    // Stored as answered: the waiting call's own close finds it ended and says nothing more.
    open.settle(close, answer);
    return { ok: true };
  }

  private async closed({ card, conversation }: Open, close: QuestionClose): Promise<void> {
    const by: { by?: Actor } = close.by ? { by: close.by } : {};
    await this.deps.store
      .appendEvent(
        card.runId,
        'questionEnded',
        { stepId: card.stepId, server: card.server, outcome: close.outcome },
        this.deps.clock(),
      )
      .catch(() => undefined);
    await this.messages
      .send(conversation, {
        kind: 'questionClosed',
        runId: card.runId,
        questionId: card.questionId,
        server: card.server,
        outcome: close.outcome,
        ...by,
      })
      .catch((err: unknown) => this.deps.log('warn', `run ${card.runId}: ${(err as Error).message}`));
  }
}

/** What a stored, ended question sent back to the server; null while it is open. */
function answerOf(q: StoredQuestion | null): QuestionAnswer | null {
  if (!q?.outcome) return null;
  if (q.outcome === 'accepted') {
    const content = q.content !== null && typeof q.content === 'object' && !Array.isArray(q.content) ? q.content : {};
    return { action: 'accept', content };
  }
  return q.outcome === 'cancelled' || q.outcome === 'stopped' ? { action: 'cancel' } : { action: 'decline' };
}

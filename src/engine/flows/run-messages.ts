/** What the flows tell people about a run: notices, status changes (which set the card's buttons), cards, reports. */
import type { Notice, OutboundMessage, ReportStream, RunStatusChange, SentencePart } from '../messages.ts';
import type { Conversation, Notifier, StoredRun } from '../ports.ts';
import { actionsFor, amendmentsLeft, plainText } from '../run/run-actions.ts';
import type { Actor, RunStatus } from '../types.ts';

/** Sends a run's messages through the channel; knows the amendment cap so buttons match what is left. */
export class RunMessages {
  constructor(
    private readonly notifier: Notifier,
    private readonly amendmentCap: number,
  ) {}

  /** Amendment rounds this run may still take. */
  amendmentsLeft(run: Pick<StoredRun, 'amendmentRounds'>): number {
    return amendmentsLeft(run, this.amendmentCap);
  }

  /** Tells the conversation (or, with `to`, only that person) something; a `sentence` keeps the people it names. */
  async notice(
    run: Pick<StoredRun, 'id' | 'conversation'>,
    level: 'info' | 'warning' | 'error',
    said: string | SentencePart[],
    to?: Actor,
  ): Promise<void> {
    const notice: Notice = {
      kind: 'notice',
      runId: run.id,
      level,
      text: typeof said === 'string' ? said : plainText(said),
    };
    if (typeof said !== 'string') notice.parts = said;
    if (to) notice.to = to;
    await this.notifier.send(run.conversation, notice);
  }

  /**
   * Tells the requester something they must not miss: in the conversation, and only them privately when that fails
   * (or, with `privateFirst`, privately first: when posting in the conversation is what just failed).
   */
  async tellRequester(
    run: Pick<StoredRun, 'id' | 'conversation' | 'requester'>,
    level: 'info' | 'warning' | 'error',
    text: string,
    privateFirst = false,
  ): Promise<void> {
    const [first, second] = privateFirst ? [run.requester, undefined] : [undefined, run.requester];
    try {
      await this.notice(run, level, text, first);
    } catch {
      await this.notice(run, level, text, second);
    }
  }

  /** Tells adapters the run's status changed, so cards show the right buttons. */
  async status(run: StoredRun, status: RunStatus, took?: RunStatusChange['took']): Promise<void> {
    const actions = actionsFor(status, this.amendmentsLeft(run));
    await this.notifier.send(run.conversation, {
      kind: 'runStatus',
      runId: run.id,
      status,
      actions,
      ...(took ? { took } : {}),
    });
  }

  /** A preview of the run's report while it is written, where the channel shows one (else null). */
  openReport(run: Pick<StoredRun, 'id' | 'conversation' | 'requester'>, status: RunStatus): ReportStream | null {
    return this.notifier.openReport?.(run.conversation, { runId: run.id, status, requester: run.requester }) ?? null;
  }

  /** Sends any other message (a card, a breakpoint, a report, an answer). */
  async send(conversation: Conversation, message: OutboundMessage): Promise<void> {
    await this.notifier.send(conversation, message);
  }
}

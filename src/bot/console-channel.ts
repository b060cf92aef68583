/**
 * The console channel: a chat in the terminal. Typed commands act on the run whose card was shown last,
 * the way a button press carries the run and revision of the card it sits on. The terminal is one thread:
 * while a run is active, other lines are replies to it (the engine classifies them).
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ChannelAdapter, InboundDecision, InboundHandler } from '../engine/channel.ts';
import type { ReviewPreference } from '../engine/types.ts';
import type { OutboundMessage } from '../engine/messages.ts';
import type { Conversation } from '../engine/ports.ts';
import type { Actor, DecisionAction, Json } from '../engine/types.ts';
import { renderConsole } from './console-render.ts';
import { toTerminalText } from './console-text.ts';

/** The console channel's options: streams (the terminal by default) and the user's name. */
export interface ConsoleChannelOptions {
  input: Readable;
  output: Writable;
  user?: string;
  /** Called when the input ends (Ctrl-D) or the user types "quit". */
  onClose?: () => void;
}

// Commands that are a whole line; anything longer is a message ("stop the nginx container" is a request).
const BARE: Record<string, DecisionAction> = {
  approve: 'approve',
  cancel: 'cancel',
  pause: 'pause',
  resume: 'resume',
  continue: 'resume',
  stop: 'stop',
};
const PREFERENCES: readonly string[] = ['all', 'risky', 'none'];

/** A channel adapter over a pair of streams. */
export class ConsoleChannel implements ChannelAdapter {
  readonly name = 'console';
  private rl: Interface | null = null;
  private current: { runId: string; revision: number } | null = null;
  private readonly actor: Actor;
  private readonly conversation: Conversation = { channel: 'console', key: 'console' };
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly options: ConsoleChannelOptions) {
    this.actor = { id: options.user ?? 'console-user', name: options.user ?? 'you', channel: 'console' };
  }

  async start(handler: InboundHandler): Promise<void> {
    this.rl = createInterface({ input: this.options.input, terminal: false });
    this.rl.on('line', (line) => {
      // Lines are handled one at a time so a fast typist's commands keep their order.
      this.pending = this.pending
        .then(() => this.handle(line, handler))
        .catch((err: unknown) => {
          this.write(`✖ ${(err as Error).message}`);
        });
    });
    this.rl.on('close', () => {
      void this.pending.then(() => this.options.onClose?.());
    });
    this.write('Steward is ready. Type a request; "help" lists the commands.');
  }

  async stop(): Promise<void> {
    this.rl?.close();
    await this.pending;
  }

  /** Resolves once every line typed so far has been handled. */
  settled(): Promise<void> {
    return this.pending;
  }

  async send(_conversation: Conversation, message: OutboundMessage): Promise<void> {
    if (message.kind === 'plan' || message.kind === 'breakpoint')
      this.current = { runId: message.runId, revision: message.revision };
    const text = renderConsole(message);
    if (text) this.write(text);
  }

  private async handle(line: string, handler: InboundHandler): Promise<void> {
    const text = line.trim();
    if (!text) return;
    const [word = '', ...rest] = text.split(/\s+/);
    const command = word.toLowerCase();
    const arg = text.slice(word.length).trim();
    if (text.toLowerCase() === 'help') return this.write(HELP);
    if (text.toLowerCase() === 'history')
      return this.current ? handler.history(this.current.runId) : this.write('! There is no run yet.');
    if (text.toLowerCase() === 'quit' || text.toLowerCase() === 'exit') return void this.rl?.close();
    const preference = arg.toLowerCase();
    if (command === 'review' && rest.length === 1 && PREFERENCES.includes(preference)) {
      await handler.setReviewPreference(this.actor, preference as ReviewPreference);
      return this.write(
        `i From now on you review ${preference === 'all' ? 'every plan' : preference === 'none' ? 'only high-risk plans' : 'medium- and high-risk plans'}.`,
      );
    }
    const decision = this.toDecision(text.toLowerCase(), command, arg);
    if (decision === 'not-a-command')
      return handler.message({ conversation: this.conversation, actor: this.actor, text });
    if (typeof decision === 'string') return this.write(`! ${decision}`);
    if (!this.current) return this.write('! There is no plan yet: type a request first.');
    await handler.decision({ ...this.current, actor: this.actor, ...decision });
  }

  /** A typed command as a decision, an error sentence, or 'not-a-command'. */
  private toDecision(
    lower: string,
    command: string,
    arg: string,
  ): Omit<InboundDecision, 'runId' | 'revision' | 'actor'> | string {
    const bare = BARE[lower];
    if (bare) return { action: bare };
    if (command === 'amend' && arg) return { action: 'amend', text: arg };
    if ((command === 'break' || command === 'unbreak') && /^[\w-]+(\s*,?\s*[\w-]+)*$/.test(arg)) {
      return { action: 'breakpoint', stepIds: arg.split(/[\s,]+/).filter(Boolean), on: command === 'break' };
    }
    if (command === 'edit' && arg) {
      try {
        return { action: 'edit', plan: JSON.parse(arg) as Json };
      } catch (err) {
        return `edit takes JSON: ${(err as Error).message}`;
      }
    }
    return 'not-a-command';
  }

  /**
   * The one way the channel reaches the terminal: every line (cards, progress, reports, notices, answers, errors,
   * help) is made inert here, so no path can forget it. Styling, if the console ever gets some, goes on after this.
   */
  private write(text: string): void {
    this.options.output.write(`${toTerminalText(text)}\n`);
  }
}

const HELP = `Type a request in plain words. On a plan card:
  approve          run the plan as shown
  amend <text>     ask for a change (re-plans; limited rounds)
  edit <json>      replace the plan, e.g. edit {"steps": [...]} (no model call; checked like any plan)
  break <ids>      hold the run after these steps end (unbreak <ids> clears)
  cancel           drop the plan
While a plan runs: pause, resume (or continue, after a breakpoint), stop; edit and break work on steps not yet run.
Anything else you type while a run is active is a reply to it: ask how it is going, or ask for a change.
history          who decided what on the last run, and its plan revisions.
review all|risky|none   how much you review from now on (high risk always waits). "quit" or "exit" leaves.`;

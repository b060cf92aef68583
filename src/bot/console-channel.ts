/**
 * The console channel: a chat in the terminal. Typed commands act on the run whose card was shown last,
 * the way a button press carries the run and revision of the card it sits on.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ChannelAdapter, InboundHandler } from '../engine/channel.ts';
import type { OutboundMessage } from '../engine/messages.ts';
import type { Conversation } from '../engine/ports.ts';
import type { Actor, DecisionAction } from '../engine/types.ts';
import { renderConsole } from './console-render.ts';

const COMMANDS: readonly DecisionAction[] = ['approve', 'amend', 'cancel', 'pause', 'resume', 'stop'];

/** The console channel's options: streams (the terminal by default) and the user's name. */
export interface ConsoleChannelOptions {
  input: Readable;
  output: Writable;
  user?: string;
  /** Called when the input ends (Ctrl-D) or the user types "quit". */
  onClose?: () => void;
}

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
      this.pending = this.pending.then(() => this.handle(line, handler)).catch((err: unknown) => {
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
    if (message.kind === 'plan') this.current = { runId: message.runId, revision: message.revision };
    this.write(renderConsole(message));
  }

  private async handle(line: string, handler: InboundHandler): Promise<void> {
    const text = line.trim();
    if (!text) return;
    const [word = '', ...rest] = text.split(/\s+/);
    const command = word.toLowerCase();
    if (command === 'help') return this.write(HELP);
    if (command === 'quit' || command === 'exit') {
      this.rl?.close();
      return;
    }
    if ((COMMANDS as readonly string[]).includes(command)) {
      if (!this.current) return this.write('! There is no plan yet: type a request first.');
      await handler.decision({ ...this.current, action: command as DecisionAction, actor: this.actor, text: rest.join(' ') });
      return;
    }
    await handler.message({ conversation: this.conversation, actor: this.actor, text });
  }

  private write(text: string): void {
    this.options.output.write(`${text}\n`);
  }
}

const HELP = `Type a request in plain words. On a plan card:
  approve          run the plan as shown
  amend <text>     ask for a change (re-plans; limited rounds)
  cancel           drop the plan
While a plan runs: pause, resume, stop. "quit" leaves (running work resumes at the next start).`;

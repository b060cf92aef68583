/**
 * The console channel: a chat in the terminal. Typed commands act on the active run whose card was shown last (or
 * the one picked with `use <id>`; `console-runs.ts` keeps the rule), the way a button press carries the run and
 * revision of the card it sits on. The terminal is one thread: while a run is active, other lines are replies to it
 * (the engine classifies them); `new <request>` starts another.
 * Lines are taken in order, but none waits for a model: a line waits only until the one before it is stored, and
 * `quit`, `cancel` and `stop` wait for nothing.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type {
  ChannelAdapter,
  CommandAnswer,
  InboundDecision,
  InboundHandler,
  InboundMessage,
  RunListing,
} from '../engine/channel.ts';
import type { ReviewPreference, RunStatus } from '../engine/types.ts';
import type { OutboundMessage, ReportStream } from '../engine/messages.ts';
import type { Conversation } from '../engine/ports.ts';
import type { Actor, DecisionAction, Json } from '../engine/types.ts';
import { CONSOLE_CONNECTIONS_STYLE, renderConsole } from './console-render.ts';
import { consoleReportStream } from './console-report-stream.ts';
import { ConsoleQuestion } from './console-question.ts';
import { ConsoleRuns, shortId } from './console-runs.ts';
import { toTerminalText } from './console-text.ts';
import { connectionsText, parseConnectionsCommand } from './connection-words.ts';
import { isWorkflowCommand } from '../engine/workflow/workflow-commands.ts';
import { WORKFLOW_HELP_LINES } from './workflow-words.ts';
import { isAssistantCommand } from '../engine/assistant/assistant-commands.ts';
import { isPromptCommand, promptSourceNote } from '../engine/server-prompts.ts';
import { ASSISTANT_HELP_LINES } from './assistant-words.ts';
import { spendReportText } from './spend-words.ts';

/** The console channel's options: streams (the terminal by default) and the user's name. */
export interface ConsoleChannelOptions {
  input: Readable;
  output: Writable;
  user?: string;
  /** Called when the input ends (Ctrl-D, once every line is handled) or at once when the user types "quit". */
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
  // An approver's raise of the delegation depth a step asks for above the setting (refused for anyone else).
  raise: 'raise',
  // An approver's widening of the grants of a run one Assistant hands to another (refused for anyone else).
  widen: 'widen',
};
const PREFERENCES: readonly string[] = ['all', 'risky', 'none'];
// Ending work is not held by a line still being handled. It waits this long for the lines typed before it (which
// never wait for a model, so normally far less), so that "approve" then "stop" typed quickly stops the started run.
const URGENT: readonly string[] = ['cancel', 'stop'];
const URGENT_WAIT_MS = 500;
// `stop <id>` and the like take a run's id as Steward prints it (8 characters) or whole; "stop the build" is a request.
const RUN_ID = /^(?:[0-9a-f]{8}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const ON_RUN: readonly string[] = ['use', 'stop', 'pause', 'resume'];

/** A channel adapter over a pair of streams. */
export class ConsoleChannel implements ChannelAdapter {
  readonly name = 'console';
  private rl: Interface | null = null;
  private readonly actor: Actor;
  private readonly conversation: Conversation = { channel: 'console', key: 'console' };
  /** Lines being taken in order; each holds the next only until it is stored, never while a model writes. */
  private queue: Promise<void> = Promise.resolve();
  /** Engine work started by lines (planning, classifying, amending, an urgent stop), until it returns. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly runs = new ConsoleRuns();
  private leaving = false;
  /** The server's question being answered here, field by field. */
  private question: ConsoleQuestion | null = null;

  constructor(private readonly options: ConsoleChannelOptions) {
    this.actor = { id: options.user ?? 'console-user', name: options.user ?? 'you', channel: 'console' };
  }

  async start(handler: InboundHandler): Promise<void> {
    this.rl = createInterface({ input: this.options.input, terminal: false });
    this.rl.on('line', (line) => this.take(line, handler));
    this.rl.on('close', () => {
      // The input ended (Ctrl-D, or a piped file ran out): finish what was typed, then leave.
      if (!this.leaving) void this.settled().then(() => this.options.onClose?.());
    });
    this.write('Steward is ready. Type a request; "help" lists the commands.');
  }

  /** Stops reading (saying what becomes of active runs); waits for lines being taken, not for a model's answer. */
  async stop(): Promise<void> {
    if (!this.leaving) this.goodbye();
    this.rl?.close();
    await this.queue;
  }

  /** Resolves once every line typed so far has been handled, the engine work it started included. */
  async settled(): Promise<void> {
    for (;;) {
      const queue = this.queue;
      await queue;
      if (this.inFlight.size === 0 && queue === this.queue) return;
      await Promise.all([...this.inFlight]);
    }
  }

  async send(_conversation: Conversation, message: OutboundMessage): Promise<void> {
    this.follow(message);
    const text = renderConsole(message);
    if (text) this.write(text);
    // The form's text ends with its first field's prompt; the lines typed next answer it.
    if (message.kind === 'question' && !this.question) this.question = new ConsoleQuestion(message);
    if (message.kind === 'questionClosed' && this.question?.card.questionId === message.questionId)
      this.question = null;
  }

  /** A line typed while a server's question is open answers its next field. */
  private async answerField(line: string, handler: InboundHandler): Promise<void> {
    const question = this.question;
    if (!question) return;
    const step = question.take(line);
    if (step.kind === 'ask') return this.write(step.prompt);
    const questionId = question.card.questionId;
    const reply =
      step.kind === 'decline'
        ? await handler.answerQuestion({ questionId, actor: this.actor, action: 'decline' })
        : await handler.answerQuestion({ questionId, actor: this.actor, action: 'accept', values: step.values });
    if (reply.ok) return;
    this.write(`! ${reply.refusal}`);
    if (reply.fields && Object.keys(reply.fields).length > 0 && this.question === question) {
      question.again(Object.keys(reply.fields));
      this.write(question.prompt());
    } else if (this.question === question) this.question = null;
  }

  /** Keeps track of the run typed decisions are for, and of what the person was shown. */
  private follow(message: OutboundMessage): void {
    this.runs.seen(message);
  }

  /** Prints a report as the model writes it; the stored report is printed whole after it if it differs. */
  openReport(conversation: Conversation, report: { runId: string; status: RunStatus }): ReportStream {
    return consoleReportStream({
      status: report.status,
      write: (text) => this.options.output.write(text),
      whole: (message) => this.send(conversation, message),
      shown: (message) => this.follow(message),
    });
  }

  private take(line: string, handler: InboundHandler): void {
    const text = line.trim();
    const lower = text.toLowerCase();
    if (lower === 'quit' || lower === 'exit') return this.quit();
    if (this.question && !URGENT.includes(lower)) {
      this.queue = this.queue.then(() =>
        this.answerField(line, handler).catch((err: unknown) => this.write(`✖ ${(err as Error).message}`)),
      );
      return;
    }
    const handle = () => this.handle(text, handler).catch((err: unknown) => this.write(`✖ ${(err as Error).message}`));
    if (!URGENT.includes(lower) && !(lower.startsWith('stop ') && RUN_ID.test(lower.slice(5).trim()))) {
      this.queue = this.queue.then(handle);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, URGENT_WAIT_MS)));
    this.track(Promise.race([this.queue, waited]).then(() => (clearTimeout(timer), handle())));
  }

  /** Leaves at once, saying what becomes of the runs still active (Steward takes them up at its next start). */
  private quit(): void {
    if (this.leaving) return;
    this.goodbye();
    this.rl?.close();
    this.options.onClose?.();
  }

  private goodbye(): void {
    this.leaving = true;
    const fates = this.runs.leaving();
    for (const line of fates) this.write(line);
    this.write(fates.length > 0 ? 'Bye: Steward stops now and picks these up when it next starts.' : 'Bye.');
  }

  private track(work: Promise<void>): void {
    const tracked: Promise<void> = work
      .catch((err: unknown) => this.write(`✖ ${(err as Error).message}`))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /** Hands a message to the engine and returns once it is stored; planning or classifying it goes on meanwhile. */
  private async toEngine(
    handler: InboundHandler,
    text: string,
    newRequest: boolean,
    fromPrompt?: string,
  ): Promise<void> {
    let accept = () => {};
    const accepted = new Promise<void>((resolve) => (accept = resolve));
    const message: InboundMessage = {
      conversation: this.conversation,
      actor: this.actor,
      text,
      accepted: accept,
      ...(newRequest ? { newRequest } : { runId: this.runs.current()?.runId }),
      ...(fromPrompt !== undefined && { fromPrompt }),
      leftAlone: (run) =>
        this.write(
          `i That does not look like it is about run ${shortId(run.id)} ("${cutTo(run.request, 60)}"), so it was left alone. Type "new <request>" to start another request, or "amend <text>" to change this one.`,
        ),
    };
    const work = handler.message(message);
    this.track(work);
    await Promise.race([accepted, work.catch(() => undefined)]);
  }

  private async handle(text: string, handler: InboundHandler): Promise<void> {
    if (!text) return;
    const [word = '', ...rest] = text.split(/\s+/);
    const command = word.toLowerCase();
    const arg = text.slice(word.length).trim();
    if (text.toLowerCase() === 'help') return this.write(HELP);
    if (text.toLowerCase() === 'dashboard') return this.dashboard(handler);
    if (text.toLowerCase() === 'spend') return this.spend(handler);
    if (text.toLowerCase() === 'history') {
      const current = this.runs.current();
      return current ? handler.history(current.runId) : this.write('! There is no run yet.');
    }
    if (text.toLowerCase() === 'runs') return this.listRuns(handler);
    // `connections` with up to two words after it (a longer line that starts so is a request in plain words).
    if (command === 'connections' && rest.length <= 2) return this.connections(handler, rest);
    if (ON_RUN.includes(command) && rest.length === 1 && RUN_ID.test(arg)) return this.onRun(handler, command, arg);
    if (command === 'new') {
      return arg
        ? this.toEngine(handler, arg, true)
        : this.write('! Say what to do, e.g. "new list the files in /tmp".');
    }
    // "schedule a call with Bob" is a request: only a line that is a workflow command goes to them.
    if (isWorkflowCommand(text)) return this.workflow(handler, text);
    if (isPromptCommand(text)) return this.prompt(handler, text);
    if (isAssistantCommand(text)) {
      const answer = await handler.assistantCommand({ actor: this.actor, conversation: this.conversation, text });
      return this.answer(answer);
    }
    const preference = arg.toLowerCase();
    if (command === 'review' && rest.length === 1 && PREFERENCES.includes(preference)) {
      await handler.setReviewPreference(this.actor, preference as ReviewPreference);
      return this.write(
        `i From now on you review ${preference === 'all' ? 'every plan' : preference === 'none' ? 'only high-risk plans' : 'medium- and high-risk plans'}.`,
      );
    }
    if (command === 'suggestions' && (preference === 'on' || preference === 'off')) {
      await handler.setBreakpointSuggestions(this.actor, preference === 'on');
      return this.write(
        preference === 'on'
          ? 'i From now on your plan cards suggest breakpoints where you stepped in before.'
          : 'i From now on your plan cards suggest no breakpoints ("suggestions on" brings them back).',
      );
    }
    const decision = this.toDecision(text.toLowerCase(), command, arg);
    if (decision === 'not-a-command') return this.toEngine(handler, text, false);
    if (typeof decision === 'string') return this.write(`! ${decision}`);
    const current = this.runs.current();
    if (!current) return this.write('! There is no plan yet: type a request first.');
    // Pause, resume and stop go to the run the person started (they reach its delegated runs from there).
    const control = decision.action === 'pause' || decision.action === 'resume' || decision.action === 'stop';
    const run = control ? this.runs.started(current) : current;
    const decided = handler.decision({ ...run, actor: this.actor, ...decision, byWord: true });
    // An amendment asks the planner again: the lines after it need not wait for the model.
    if (decision.action === 'amend') return this.track(decided);
    await decided;
  }

  /** A sign-in link to the web dashboard: the console is local, so printing it here shows it to this person only. */
  private async dashboard(handler: InboundHandler): Promise<void> {
    const link = await handler.dashboardLink(this.actor);
    this.write(
      link
        ? `i Your dashboard sign-in link (works once, for 15 minutes): ${link}`
        : '! The dashboard is off: set STEWARD_DASHBOARD_PORT and STEWARD_DASHBOARD_SECRET (docs/dashboard.md).',
    );
  }

  /** `spend`: what models cost today and this month, with the spend caps and what is left of them. */
  private async spend(handler: InboundHandler): Promise<void> {
    if (!handler.spendReport) return this.write('! Spend is not shown here.');
    const report = await handler.spendReport(this.actor, this.conversation);
    this.write(`i ${spendReportText(report)}`);
  }

  /** `connections [connect|disconnect <server>]`: printed here, so only this person sees a connect link. */
  private async connections(handler: InboundHandler, words: string[]): Promise<void> {
    const command = parseConnectionsCommand(words, CONSOLE_CONNECTIONS_STYLE);
    if ('note' in command) return this.write(`! ${command.note}`);
    const answer = await handler.connections(this.actor, command);
    const refused =
      answer.kind === 'unknown' || answer.kind === 'approverOnly' || (answer.kind === 'link' && !answer.link);
    this.write(`${refused ? '!' : 'i'} ${connectionsText(answer, CONSOLE_CONNECTIONS_STYLE)}`);
  }

  /**
   * A workflow command, answered in the terminal. It is stored before the next line is taken (so `save` then
   * `schedule` typed quickly finds the workflow), except `workflow <name> amend …`, which asks the planner.
   */
  private async workflow(handler: InboundHandler, text: string): Promise<void> {
    const answered = handler
      .workflowCommand({ actor: this.actor, conversation: this.conversation, text })
      .then((answer) => this.answer(answer));
    if (/^\s*workflow\s+\S+\s+amend\b/i.test(text)) return this.track(answered);
    await answered;
  }

  /** `runs`: this person's active runs in the terminal, with their ids, the one typed commands go to marked. */
  private async listRuns(handler: InboundHandler): Promise<void> {
    const runs = await this.activeHere(handler);
    if (runs.length === 0) return this.write('i No run is active.');
    const current = this.runs.current()?.runId;
    const width = Math.max(...runs.map((r) => r.statusText.length));
    const lines = runs.map(
      (r) => `${r.id === current ? '*' : ' '} ${shortId(r.id)}  ${r.statusText.padEnd(width)}  ${cutTo(r.request, 60)}`,
    );
    this.write(
      [
        'i Active runs (typed commands go to the one marked *):',
        ...lines,
        'Type "use <id>" to send them to another, or "stop <id>", "pause <id>", "resume <id>" to act on one directly.',
      ].join('\n'),
    );
  }

  /** `use <id>` picks the run typed commands go to; `stop <id>`, `pause <id>` and `resume <id>` act on it directly. */
  private async onRun(handler: InboundHandler, command: string, id: string): Promise<void> {
    const run = (await this.activeHere(handler)).find((r) => r.id.toLowerCase().startsWith(id.toLowerCase()));
    if (!run) return this.write(`! No active run has the id ${id}; "runs" lists them.`);
    if (command === 'use') {
      this.runs.use(run.id, run.status);
      return this.write(`i Commands now go to run ${shortId(run.id)} ("${cutTo(run.request, 60)}").`);
    }
    const action = command as DecisionAction;
    await handler.decision({ runId: run.id, revision: this.runs.revisionOf(run.id), action, actor: this.actor });
  }

  /** This person's active runs in the terminal, newest first. */
  private async activeHere(handler: InboundHandler): Promise<RunListing[]> {
    const runs = await handler.activeRuns(this.actor);
    return runs.filter((r) => r.conversation.channel === this.conversation.channel);
  }

  /** A workflow or Assistant command's answer: a notice like every other, `i` before it, or `!` before a refusal. */
  /** `prompts` lists the servers' prompts; `prompt <server>/<name> …` starts a request with one's text, shown first. */
  private async prompt(handler: InboundHandler, text: string): Promise<void> {
    if (!handler.promptList || !handler.choosePrompt) return this.write('! MCP server prompts are not offered here.');
    if (/^prompts\s*$/i.test(text)) return this.answer(await handler.promptList(this.actor));
    const chosen = await handler.choosePrompt(this.actor, text);
    if (!chosen.ok) return this.answer(chosen.answer);
    const quoted = toTerminalText(chosen.request)
      .split('\n')
      .map((l) => `  │ ${l}`)
      .join('\n');
    this.write(`i ${promptSourceNote(chosen.source)}\n${quoted}`);
    return this.toEngine(handler, chosen.request, true, chosen.source);
  }

  private answer({ text, level }: CommandAnswer): void {
    if (text) this.write(renderConsole({ kind: 'notice', level, text }));
  }

  /** A typed command as a decision, an error sentence, or 'not-a-command'. */
  private toDecision(
    lower: string,
    command: string,
    arg: string,
  ): Omit<InboundDecision, 'runId' | 'revision' | 'actor' | 'byWord'> | string {
    const bare = BARE[lower];
    if (bare) return { action: bare };
    if (command === 'amend' && arg) return { action: 'amend', text: arg };
    if (command === 'break' && arg.toLowerCase() === 'suggested')
      return { action: 'breakpoint', suggested: true, on: true };
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

function cutTo(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const HELP = `Type a request in plain words. On a plan card:
  approve          run the plan as shown
  amend <text>     ask for a change (re-plans; limited rounds)
  edit <json>      replace the plan, e.g. edit {"steps": [...]} (no model call; checked like any plan)
  break <ids>      hold the run after these steps end (unbreak <ids> clears)
  break suggested  hold before the steps the card suggests (approve alone never stops there)
  cancel           drop the plan
While a plan runs: pause, resume (or continue, after a breakpoint), stop; edit and break work on steps not yet run.
While a request is being planned, "cancel" (or "stop") drops it at once.
Anything else you type while a run is active is a reply to it: ask how it is going, or ask for a change.
new <request>    start another request even while a run is active. Only this command starts one: a reply the
                 model takes for another request is left alone (and said so), since a guess must not start work.
Commands and replies go to the active run whose card you saw last; a run that ends (a quick answer, say) hands
that place back to the run that had it before.
runs             the active runs with their ids; commands go to the one marked *.
use <id>         send commands and replies to that run; stop <id>, pause <id>, resume <id> act on it directly.
history          who decided what on the last run, and its plan revisions.
dashboard        a sign-in link to the web dashboard (runs, plan graphs, timelines), when it is on.
spend            what models cost today and this month, by channel, person and model, with the caps left.
review all|risky|none   how much you review from now on (high risk always waits).
suggestions on|off      whether your plan cards suggest breakpoints where you stepped in before.
connections      your own accounts on servers that run your steps as you; connections connect <server> prints a
                 private link to connect one, connections disconnect <server> revokes and forgets it.
prompts          the MCP servers' prompts (starting points they offer); prompt <server>/<name> key=value … starts a
                 request with one's text (the server's words: read the plan made from it before approving).
quit (or exit)   leave at once; active runs are kept and taken up again when Steward next starts.
Workflows (a run's approved plan, saved to run again or on a schedule):
${WORKFLOW_HELP_LINES.map((l) => `  ${l.form.padEnd(40)} ${l.what}`).join('\n')}
Assistants (named specialists with their own instructions and tool grants; approvers change them):
${ASSISTANT_HELP_LINES.map((l) => `  ${l.form.padEnd(40)} ${l.what}`).join('\n')}`;

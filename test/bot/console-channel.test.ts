import fc from 'fast-check';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/bot/console-channel.ts';
import { renderConsole } from '../../src/bot/console-render.ts';
import {
  info,
  refusal,
  type CommandAnswer,
  type InboundDecision,
  type InboundHandler,
  type WorkflowRequest,
} from '../../src/engine/channel.ts';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import type { Conversation } from '../../src/engine/ports.ts';
import type { DecisionAction } from '../../src/engine/types.ts';
import { waitUntil } from '../helpers/wait.ts';
import { hostileText, rawControls } from './terminal-controls.ts';

const conversation: Conversation = { channel: 'console', key: 'console' };
const risk = fc.constantFrom('low' as const, 'medium' as const, 'high' as const);
const actions = fc.subarray<DecisionAction>(['approve', 'amend', 'cancel', 'pause', 'resume', 'stop', 'edit']);

/** One arbitrary message of each kind, every text field filled from `text`; the record names every kind. */
function messages(text: fc.Arbitrary<string>): Record<OutboundMessage['kind'], fc.Arbitrary<OutboundMessage>> {
  const texts = fc.array(text, { maxLength: 3 });
  const step = fc.record({
    number: fc.nat(),
    id: text,
    kind: fc.constantFrom('tool' as const, 'llm' as const, 'condition' as const),
    target: text,
    argsPreview: text,
    as: fc.option(fc.record({ id: text, name: text, channel: text }), { nil: undefined }),
    dependsOn: texts,
    description: text,
    optional: fc.boolean(),
    risk,
  });
  return {
    plan: fc.record({
      kind: fc.constant('plan' as const),
      runId: text,
      revision: fc.nat(),
      summary: text,
      steps: fc.array(step, { maxLength: 3 }),
      layers: fc.array(texts, { maxLength: 3 }),
      risk,
      risks: texts,
      needsReview: fc.boolean(),
      amendmentsLeft: fc.nat(3),
      requester: fc.record({ id: text, name: text, channel: text }),
      actions,
      breakpoints: texts,
      breakpointsBefore: texts,
      suggestedBreakpoints: fc.array(fc.record({ stepId: text, tool: text, why: text }), { maxLength: 2 }),
      note: fc.option(text, { nil: undefined }),
      warnings: texts,
    }),
    files: fc.record({
      kind: fc.constant('files' as const),
      runId: text,
      files: fc.array(fc.record({ stepId: text, name: text, mimeType: text, data: fc.constant(''), bytes: fc.nat() }), {
        maxLength: 2,
      }),
    }),
    progress: fc.record({
      kind: fc.constant('progress' as const),
      runId: text,
      stepId: text,
      status: fc.constantFrom('pending', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'),
      detail: text,
      finished: fc.nat(),
      total: fc.nat(),
    }),
    report: fc.record({
      kind: fc.constant('report' as const),
      runId: text,
      status: fc.constantFrom('completed', 'failed', 'stopped', 'cancelled'),
      text,
    }),
    answer: fc.record({ kind: fc.constant('answer' as const), text }),
    connectionCheck: fc.record({
      kind: fc.constant('connectionCheck' as const),
      server: text,
      link: text,
      to: fc.record({ id: text, name: text, channel: text }),
    }),
    notice: fc.record({
      kind: fc.constant('notice' as const),
      level: fc.constantFrom('info', 'warning', 'error'),
      text,
    }),
    runStatus: fc.record({
      kind: fc.constant('runStatus' as const),
      runId: text,
      status: fc.constantFrom('running', 'paused', 'completed'),
      actions,
    }),
    breakpoint: fc.record({
      kind: fc.constant('breakpoint' as const),
      runId: text,
      revision: fc.nat(),
      stepId: text,
      before: fc.boolean(),
      output: text,
      actions,
    }),
    question: fc.record({
      kind: fc.constant('question' as const),
      runId: text,
      questionId: text,
      stepId: text,
      server: text,
      message: text,
      fields: fc.array(
        fc.oneof(
          fc.record({
            name: text,
            label: text,
            description: text,
            required: fc.boolean(),
            kind: fc.constant('text' as const),
          }),
          fc.record({
            name: text,
            label: text,
            description: text,
            required: fc.boolean(),
            kind: fc.constant('choice' as const),
            options: fc.array(fc.record({ value: text, label: text }), { maxLength: 3 }),
            default: text,
          }),
        ),
        { maxLength: 3 },
      ),
      requester: fc.record({ id: text, name: text, channel: text }),
      deadline: fc.constant(new Date('2026-12-05T10:00:00Z')),
    }),
    questionClosed: fc.record({
      kind: fc.constant('questionClosed' as const),
      runId: text,
      questionId: text,
      server: text,
      outcome: fc.constantFrom('accepted' as const, 'declined' as const, 'stopped' as const, 'timedOut' as const),
      by: fc.record({ id: text, name: text, channel: text }),
    }),
  };
}

/** A console channel writing into a buffer. */
function consoleOnBuffer() {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const channel = new ConsoleChannel({ input, output, user: 'ada' });
  return { channel, input, printed: () => printed };
}

describe('console channel: nothing from a model, a tool or a person reaches the terminal raw', () => {
  const hostile = messages(hostileText);
  for (const [kind, arbitrary] of Object.entries(hostile)) {
    it(`${kind}: any text in any field prints no control, bidi control or separator`, async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, async (message) => {
          const { channel, printed } = consoleOnBuffer();
          await channel.send(conversation, message);
          expect(rawControls(printed())).toEqual([]);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('leaves the layout alone: with text a terminal only shows, it prints exactly what the renderer wrote', async () => {
    const shown = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => rawControls(s).length === 0);
    const plain = messages(shown.filter((s) => !s.includes('\t')));
    await fc.assert(
      fc.asyncProperty(fc.oneof(...Object.values(plain)), async (message) => {
        const { channel, printed } = consoleOnBuffer();
        await channel.send(conversation, message);
        const text = renderConsole(message);
        expect(printed()).toBe(text ? `${text}\n` : '');
      }),
    );
  });

  it('typed lines, the errors they cause and the answers to them print nothing raw', async () => {
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (typed, thrown) => {
        const { channel, input, printed } = consoleOnBuffer();
        const handler: InboundHandler = {
          message: async () => {
            throw new Error(thrown);
          },
          decision: async () => channel.send(conversation, { kind: 'notice', level: 'error', text: thrown }),
          claimDelivery: async () => true,
          canDecide: async () => true,
          history: async () => channel.send(conversation, { kind: 'answer', text: thrown }),
          setReviewPreference: async () => {},
          setBreakpointSuggestions: async () => {},
          activeRuns: async () => [],
          recentRuns: async () => [],
          reviewPreference: async () => 'risky',
          workflowsOf: async () => null,
          editablePlan: async () => null,
          checkEdit: async () => null,
          workflowCommand: async () => refusal(thrown),
          assistantCommand: async () => info(thrown),
          dashboardLink: async () => thrown,
          connections: async () => ({ kind: 'unknown', server: thrown, servers: [thrown] }),
          answerQuestion: async () => ({ ok: false, refusal: thrown }),
          openQuestion: async () => null,
        };
        await channel.start(handler);
        for (const line of [
          typed,
          `edit ${typed}`,
          `amend ${typed}`,
          `break ${typed}`,
          `save ${typed}`,
          'history',
          'approve',
        ])
          input.write(`${line}\n`);
        await new Promise((resolve) => setImmediate(resolve));
        await channel.settled();
        await channel.stop();
        expect(rawControls(printed())).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('a tool error overwriting its failure line with a fake approval shows the carriage return instead', async () => {
    const { channel, printed } = consoleOnBuffer();
    await channel.send(conversation, {
      kind: 'progress',
      runId: 'r',
      stepId: 'send',
      status: 'failed',
      detail: 'boom\r\x1b[2K  ✔ send succeeded — Approved \x1b]0;pwned\x07',
      finished: 1,
      total: 1,
    });
    expect(printed()).toBe(
      '  ✖ send failed — boom\\x0d\\x1b[2K  ✔ send succeeded — Approved \\x1b]0;pwned\\x07 [1/1]\n',
    );
  });
});

describe('console channel: no line waits for a model', () => {
  /** A handler whose messages are stored at once and then never finish, as a planner that never answers. */
  function slowEngine(decide: (d: InboundDecision) => Promise<void> = async () => {}) {
    const seen: string[] = [];
    const handler: InboundHandler = {
      message: (m) => {
        seen.push(`message ${m.text}${m.newRequest ? ' (new)' : ''}`);
        m.accepted?.();
        return new Promise<void>(() => {});
      },
      activeRuns: async () => [],
      recentRuns: async () => [],
      reviewPreference: async () => 'risky',
      workflowsOf: async () => null,
      editablePlan: async () => null,
      checkEdit: async () => null,
      workflowCommand: async () => info(''),
      assistantCommand: async () => info(''),
      dashboardLink: async () => null,
      connections: async () => ({ kind: 'off' as const }),
      answerQuestion: async () => ({ ok: false as const, refusal: 'not here' }),
      openQuestion: async () => null,
      decision: async (d) => {
        seen.push(`decision ${d.action}`);
        await decide(d);
      },
      canDecide: async () => true,
      claimDelivery: async () => true,
      history: async () => {},
      setReviewPreference: async () => {},
      setBreakpointSuggestions: async () => {},
    };
    return { handler, seen };
  }

  it('takes the next line while the one before it is still with the model, and "new" marks a new request', async () => {
    const { channel, input } = consoleOnBuffer();
    const { handler, seen } = slowEngine();
    await channel.start(handler);
    input.write('list the files\nhow is it going?\nnew echo b\n');
    await waitUntil('three messages', () => seen.length === 3);
    expect(seen).toEqual(['message list the files', 'message how is it going?', 'message echo b (new)']);
    await channel.stop();
  });

  it('"quit" leaves at once while the model writes, and says goodbye', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    let closed = 0;
    const channel = new ConsoleChannel({ input, output, user: 'ada', onClose: () => closed++ });
    await channel.start(slowEngine().handler);
    input.write('list the files\nquit\n');
    await waitUntil('the channel to close', () => closed === 1);
    expect(printed).toMatch(/\nBye\.\n$/);
    await channel.stop();
    expect(closed).toBe(1);
  });

  it('"stop" right after "approve" comes after it; a line stuck in the store does not hold "stop"', async () => {
    const { channel, input } = consoleOnBuffer();
    const { handler, seen } = slowEngine((d) => (d.action === 'pause' ? new Promise(() => {}) : Promise.resolve()));
    await channel.start(handler);
    await channel.send(conversation, {
      kind: 'breakpoint',
      runId: 'r',
      revision: 0,
      stepId: 's',
      before: false,
      output: '',
      actions: [],
    });
    input.write('approve\nstop\n');
    await waitUntil('approve, then stop', () => seen.length === 2);
    expect(seen).toEqual(['decision approve', 'decision stop']);
    input.write('pause\nstop\n');
    await waitUntil('stop despite the stuck pause', () => seen.length === 4);
    expect(seen.slice(2)).toEqual(['decision pause', 'decision stop']);
  });
});

describe('console channel: workflow commands', () => {
  /** A handler that records what reaches the engine and answers workflow commands with `answer`. */
  function recordingEngine(answer: (text: string) => Promise<CommandAnswer>) {
    const seen: string[] = [];
    const requests: WorkflowRequest[] = [];
    const handler: InboundHandler = {
      message: async (m) => {
        seen.push(`message ${m.text}`);
        m.accepted?.();
      },
      decision: async (d) => void seen.push(`decision ${d.action}`),
      claimDelivery: async () => true,
      canDecide: async () => true,
      history: async () => {},
      setReviewPreference: async (_actor, preference) => void seen.push(`review ${preference}`),
      setBreakpointSuggestions: async (_actor, on) => void seen.push(`suggestions ${on ? 'on' : 'off'}`),
      activeRuns: async () => [],
      recentRuns: async () => [],
      reviewPreference: async () => 'risky',
      workflowsOf: async () => null,
      editablePlan: async () => null,
      checkEdit: async () => null,
      workflowCommand: (request) => {
        requests.push(request);
        seen.push(`workflow ${request.text}`);
        return answer(request.text);
      },
      assistantCommand: async (request) => {
        seen.push(`assistant ${request.text}`);
        return info('assistant answer');
      },
      dashboardLink: async () => null,
      connections: async () => ({ kind: 'off' as const }),
      answerQuestion: async () => ({ ok: false as const, refusal: 'not here' }),
      openQuestion: async () => null,
    };
    return { handler, seen, requests };
  }

  it('a line starting with a workflow word goes to the engine as a workflow command, and its answer is printed', async () => {
    const { channel, input, printed } = consoleOnBuffer();
    const { handler, seen, requests } = recordingEngine(async (text) => info(`answer to ${text}`));
    await channel.start(handler);
    const lines = [
      'save digest',
      'Schedule digest "0 9 * * MON" Europe/Berlin',
      'workflows',
      'workflow digest run',
      'fork digest digest-2',
    ];
    input.write(`${lines.join('\n')}\n`);
    await waitUntil('five answers', () => requests.length === 5);
    await channel.settled();
    expect(seen).toEqual(lines.map((l) => `workflow ${l}`));
    expect(requests[0]).toEqual({
      actor: { id: 'ada', name: 'ada', channel: 'console' },
      conversation,
      text: 'save digest',
    });
    for (const line of lines) expect(printed()).toContain(`\ni answer to ${line}\n`);
    await channel.stop();
  });

  it('an answer the engine marks as a refusal is printed with "!", one that did its work with "i"', async () => {
    const { channel, input, printed } = consoleOnBuffer();
    const { handler } = recordingEngine(async (text) =>
      text === 'workflows' ? info('Workflows (1):') : refusal('There is no workflow named "nope".'),
    );
    await channel.start(handler);
    input.write('workflow nope run\nworkflows\n');
    await waitUntil('both answers', () => printed().includes('Workflows (1):'));
    expect(printed()).toContain('\n! There is no workflow named "nope".\ni Workflows (1):\n');
    await channel.stop();
  });

  it('other commands keep their meaning, and words that only begin like a workflow word are requests', async () => {
    const { channel, input } = consoleOnBuffer();
    const { handler, seen } = recordingEngine(async () => info('no'));
    await channel.start(handler);
    input.write('review all\nsavefile notes\nnew save the logs\nschedules please\n');
    await waitUntil('four lines handled', () => seen.length === 4);
    expect(seen).toEqual(['review all', 'message savefile notes', 'message save the logs', 'message schedules please']);
    await channel.stop();
  });

  it('the answer is made inert like any text, and help lists the workflow commands', async () => {
    const { channel, input, printed } = consoleOnBuffer();
    const { handler } = recordingEngine(async () => info('Saved \x1b]0;pwned\x07 digest\u202e.'));
    await channel.start(handler);
    input.write('save digest\nhelp\n');
    await waitUntil('help printed', () => printed().includes('Workflows'));
    await channel.settled();
    expect(rawControls(printed())).toEqual([]);
    expect(printed()).toContain('Saved \\x1b]0;pwned\\x07 digest\\u202e.');
    for (const form of ['save <name>', 'workflows', 'workflow <name>', 'fork <name> <new name>', 'schedule <name>'])
      expect(printed()).toContain(`  ${form}`);
    await channel.stop();
  });

  it('"workflow <name> amend …" asks the planner: the lines after it do not wait for its answer', async () => {
    const { channel, input, printed } = consoleOnBuffer();
    let answer = (_: CommandAnswer) => {};
    const { handler, seen } = recordingEngine((text) =>
      text.includes('amend') ? new Promise((resolve) => (answer = resolve)) : Promise.resolve(info(`ok ${text}`)),
    );
    await channel.start(handler);
    input.write('workflow digest amend also send it to ops\nworkflows\n');
    await waitUntil('the list answered', () => printed().includes('ok workflows'));
    expect(seen).toEqual(['workflow workflow digest amend also send it to ops', 'workflow workflows']);
    answer(info('Version 2 of digest is ready.'));
    await channel.settled();
    expect(printed()).toContain('Version 2 of digest is ready.');
    await channel.stop();
  });
});

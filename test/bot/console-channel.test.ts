import fc from 'fast-check';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/bot/console-channel.ts';
import { renderConsole } from '../../src/bot/console-render.ts';
import type { InboundDecision, InboundHandler } from '../../src/engine/channel.ts';
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
      suggestedBreakpoints: texts,
      note: fc.option(text, { nil: undefined }),
      warnings: texts,
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
          canDecide: async () => true,
          history: async () => channel.send(conversation, { kind: 'answer', text: thrown }),
          setReviewPreference: async () => {},
          activeRuns: async () => [],
          recentRuns: async () => [],
          editablePlan: async () => null,
          checkEdit: async () => null,
        };
        await channel.start(handler);
        for (const line of [typed, `edit ${typed}`, `amend ${typed}`, `break ${typed}`, 'history', 'approve'])
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
      editablePlan: async () => null,
      checkEdit: async () => null,
      decision: async (d) => {
        seen.push(`decision ${d.action}`);
        await decide(d);
      },
      canDecide: async () => true,
      history: async () => {},
      setReviewPreference: async () => {},
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

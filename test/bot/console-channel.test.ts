import fc from 'fast-check';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleChannel } from '../../src/bot/console-channel.ts';
import { renderConsole } from '../../src/bot/console-render.ts';
import type { InboundHandler } from '../../src/engine/channel.ts';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import type { Conversation } from '../../src/engine/ports.ts';
import type { DecisionAction } from '../../src/engine/types.ts';
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

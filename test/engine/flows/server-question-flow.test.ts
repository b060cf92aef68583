/**
 * ServerQuestionFlow with its ports in memory: a question that asks for a secret or is no form is declined at once
 * and the thread told why; an open question takes one answer, from the requester or an approver only; a Stop ends it
 * as `stopped`.
 */
import { describe, expect, it } from 'vitest';
import { RunMessages } from '../../../src/engine/flows/run-messages.ts';
import { ServerQuestionFlow } from '../../../src/engine/flows/server-question-flow.ts';
import type { OutboundMessage } from '../../../src/engine/messages.ts';
import type { StoredRun } from '../../../src/engine/ports.ts';
import {
  RUN_STOPPED,
  type QuestionClose,
  type QuestionLog,
  type StoredQuestion,
} from '../../../src/engine/server-questions.ts';
import type { Json } from '../../../src/engine/types.ts';

const ada = { id: 'ada', channel: 'test' };
const run = { id: 'r1', requester: ada, conversation: { channel: 'test', key: 't' }, status: 'running' } as StoredRun;

function memoryLog(): QuestionLog & { rows: StoredQuestion[] } {
  const rows: StoredQuestion[] = [];
  return {
    rows,
    addQuestion: (q) => {
      rows.push({ ...q, outcome: null, content: null, answeredBy: null, reason: null, closedAt: null });
      return Promise.resolve();
    },
    closeQuestion: (id: string, close: QuestionClose, at: Date) => {
      const row = rows.find((r) => r.id === id);
      if (!row || row.outcome) return Promise.resolve(false);
      Object.assign(row, {
        outcome: close.outcome,
        content: close.content ?? null,
        answeredBy: close.by ?? null,
        reason: close.reason ?? null,
        closedAt: at,
      });
      return Promise.resolve(true);
    },
    getQuestion: (id) => Promise.resolve(rows.find((r) => r.id === id) ?? null),
    questionsOf: (runId) => Promise.resolve(rows.filter((r) => r.runId === runId)),
  };
}

function stage(questions = memoryLog()) {
  const sent: OutboundMessage[] = [];
  let n = 0;
  const flow = new ServerQuestionFlow(
    {
      store: { getRun: () => Promise.resolve(run), appendEvent: () => Promise.resolve() },
      questions,
      clock: () => new Date('2026-12-05T10:00:00Z'),
      newId: () => `q${++n}`,
      log: () => {},
      approvers: ['test:boss'],
      timeoutMs: 60_000,
    },
    new RunMessages(
      {
        send: (_c, m) => {
          sent.push(m);
          return Promise.resolve();
        },
      },
      3,
    ),
  );
  return { flow, sent, questions };
}

const call = { runId: 'r1', stepId: 's1', callDeadline: new Date('2026-12-05T11:00:00Z') };
const form = (properties: Record<string, Json>, required: string[] = []): Json => ({
  type: 'object',
  properties,
  required,
});
const shown = async (sent: OutboundMessage[]) => {
  while (!sent.some((m) => m.kind === 'question')) await new Promise((r) => setImmediate(r));
};

describe('ServerQuestionFlow', () => {
  it('declines a question that asks for a password, stores it refused and tells the thread why; no form is shown', async () => {
    const { flow, sent, questions } = stage();
    const request = { server: 'shop', message: 'Log in', requestedSchema: form({ password: { type: 'string' } }) };
    const answer = await flow.ask(call, request, new AbortController().signal);
    expect(answer).toEqual({ action: 'decline' });
    expect(questions.rows[0]).toMatchObject({ outcome: 'refused', server: 'shop', stepId: 's1' });
    expect(sent.map((m) => m.kind)).toEqual(['notice']);
    expect(sent[0]).toMatchObject({ level: 'warning' });
    expect((sent[0] as { text: string }).text).toMatch(
      /declined it for you because it asks for what looks like a secret \(password\)/,
    );
  });

  it('declines a schema that is no form (a nested object), saying so', async () => {
    const { flow, sent } = stage();
    const request = { server: 'shop', message: 'x', requestedSchema: form({ a: { type: 'object' } }) };
    expect(await flow.ask(call, request, new AbortController().signal)).toEqual({ action: 'decline' });
    expect((sent[0] as { text: string }).text).toMatch(/cannot be shown as a form/);
  });

  it('takes one answer, from the requester: a bystander is refused, a second answer finds it ended', async () => {
    const { flow, sent, questions } = stage();
    const request = {
      server: 'shop',
      message: 'Size?',
      requestedSchema: form({ size: { type: 'integer' } }, ['size']),
    };
    const asked = flow.ask(call, request, new AbortController().signal);
    await shown(sent);
    const bob = { id: 'bob', channel: 'test' };
    expect(await flow.answer({ questionId: 'q1', actor: bob, action: 'accept', values: { size: '3' } })).toMatchObject({
      ok: false,
      refusal: expect.stringMatching(/Only the person who asked/) as string,
    });
    expect(await flow.answer({ questionId: 'q1', actor: ada, action: 'accept', values: { size: 'x' } })).toEqual({
      ok: false,
      refusal: 'size: a number is needed',
      fields: { size: 'a number is needed' },
    });
    expect(await flow.answer({ questionId: 'q1', actor: ada, action: 'accept', values: { size: '3' } })).toEqual({
      ok: true,
    });
    expect(await asked).toEqual({ action: 'accept', content: { size: 3 } });
    expect(await flow.answer({ questionId: 'q1', actor: ada, action: 'decline' })).toEqual({
      ok: false,
      refusal: 'That question has ended already.',
    });
    expect(questions.rows[0]).toMatchObject({ outcome: 'accepted', answeredBy: ada, content: { size: 3 } });
    expect(sent.filter((m) => m.kind === 'questionClosed')).toHaveLength(1);
  });

  it('an approver may decline', async () => {
    const { flow, sent } = stage();
    const asked = flow.ask(
      call,
      { server: 's', message: 'm', requestedSchema: form({}) },
      new AbortController().signal,
    );
    await shown(sent);
    expect(await flow.answer({ questionId: 'q1', actor: { id: 'boss', channel: 'test' }, action: 'decline' })).toEqual({
      ok: true,
    });
    expect(await asked).toEqual({ action: 'decline' });
  });

  it('an answer taken by another process (the press reached it) reaches the server through the asking one', async () => {
    const asking = stage();
    const other = stage(asking.questions);
    const request = {
      server: 'shop',
      message: 'Size?',
      requestedSchema: form({ size: { type: 'integer' } }, ['size']),
    };
    const asked = asking.flow.ask(call, request, new AbortController().signal);
    await shown(asking.sent);
    expect(await other.flow.card('q1')).toMatchObject({ kind: 'question', runId: 'r1', fields: [{ name: 'size' }] });
    expect(await other.flow.answer({ questionId: 'q1', actor: ada, action: 'accept', values: { size: '4' } })).toEqual({
      ok: true,
    });
    expect(await asked).toEqual({ action: 'accept', content: { size: 4 } });
    expect(asking.sent.at(-1)).toMatchObject({ kind: 'questionClosed', outcome: 'accepted', by: ada });
    expect(await other.flow.card('q1')).toBeNull();
  });

  it('a Stop (the call aborted with RUN_STOPPED) cancels it, stored and shown as stopped', async () => {
    const { flow, sent, questions } = stage();
    const stop = new AbortController();
    const asked = flow.ask(call, { server: 's', message: 'm', requestedSchema: form({}) }, stop.signal);
    await shown(sent);
    stop.abort(RUN_STOPPED);
    expect(await asked).toEqual({ action: 'cancel' });
    expect(questions.rows[0]?.outcome).toBe('stopped');
    expect(sent.at(-1)).toMatchObject({ kind: 'questionClosed', outcome: 'stopped' });
  });
});

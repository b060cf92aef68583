import { describe, expect, it } from 'vitest';
import { parseIntent, type ReplyIntent } from '../../../src/engine/flows/classify.ts';

describe("reading the classifier's one-word answer", () => {
  it.each<[string, ReplyIntent]>([
    ['status', 'status'],
    ['Status.', 'status'],
    ['STATUS', 'status'],
    ['  status!\n', 'status'],
    ['"status"', 'status'],
    ['Status?', 'status'],
    ['- status', 'status'],
    ['(unrelated)', 'unrelated'],
    ['unrelated', 'unrelated'],
    [' UNRELATED\n', 'unrelated'],
    ['Unrelated.', 'unrelated'],
    ['**unrelated**', 'unrelated'],
    ['new', 'new'],
    ['New.', 'new'],
  ])('an exact %j is taken as %s', (text, intent) => {
    expect(parseIntent(text)).toBe(intent);
  });

  it.each([
    'status please',
    'not unrelated',
    'unrelated or status',
    'statuses',
    'Status: amend',
    '',
    '   ',
    'amend',
    'Amend.',
    'I cannot tell',
    'estado',
    'new request',
    'renew',
  ])('anything else (%j) is an amendment, so the reply is not dropped', (text) => {
    expect(parseIntent(text)).toBe('amend');
  });
});

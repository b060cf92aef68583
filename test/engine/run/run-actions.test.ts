import { describe, expect, it } from 'vitest';
import {
  actionsFor,
  amendmentsLeft,
  mayDecide,
  plainText,
  sentence,
  who,
} from '../../../src/engine/run/run-actions.ts';
import type { Actor, DecisionAction, RunStatus } from '../../../src/engine/types.ts';

describe('what a person may do on a run', () => {
  it.each([
    [0, 3, 3],
    [2, 3, 1],
    [3, 3, 0],
    [5, 3, 0],
    [0, 0, 0],
  ])('after %i amendment rounds under a cap of %i, %i are left (never fewer than none)', (rounds, cap, left) => {
    expect(amendmentsLeft({ amendmentRounds: rounds }, cap)).toBe(left);
  });

  it.each<[RunStatus, number, DecisionAction[]]>([
    ['awaiting_review', 2, ['approve', 'amend', 'cancel']],
    ['awaiting_review', 0, ['approve', 'cancel']],
    ['running', 2, ['pause', 'stop']],
    ['running', 0, ['pause', 'stop']],
    ['paused', 1, ['resume', 'stop']],
    ['planning', 1, []],
    ['stopping', 1, []],
    ['completed', 1, []],
    ['failed', 1, []],
    ['cancelled', 1, []],
    ['stopped', 1, []],
  ])('a run %s with %i amendments left offers %j', (status, amendments, actions) => {
    expect(actionsFor(status, amendments)).toEqual(actions);
  });

  const requester: Actor = { id: 'U1', name: 'Ada', channel: 'slack' };
  const run = { requester };
  const approvers = ['slack:U9', 'cli:boss', 'discord:role:777'];
  it.each<[string, Actor, boolean]>([
    ['the requester', { id: 'U1', channel: 'slack' }, true],
    ['a configured approver', { id: 'U9', channel: 'slack' }, true],
    ['an approver configured on the cli channel', { id: 'boss', channel: 'cli' }, true],
    ['someone else', { id: 'U2', channel: 'slack' }, false],
    ["the requester's id on another channel", { id: 'U1', channel: 'cli' }, false],
    ["an approver's id on another channel", { id: 'U9', channel: 'cli' }, false],
    ['an id that spells an approver with the channel', { id: 'slack:U9', channel: '' }, false],
    ['a member of an approver role', { id: '42', channel: 'discord', roles: ['1', '777'] }, true],
    ['a member of other roles only', { id: '42', channel: 'discord', roles: ['1', '2'] }, false],
    ["an approver role's id on another channel", { id: '42', channel: 'slack', roles: ['777'] }, false],
    ['someone whose id is an approver role', { id: '777', channel: 'discord' }, false],
  ])('%s %j may decide: %s', (_, actor, allowed) => {
    expect(mayDecide(run, actor, approvers)).toBe(allowed);
  });

  it('with no approvers configured, only the requester may decide', () => {
    expect(mayDecide(run, { id: 'U9', channel: 'slack' }, [])).toBe(false);
    expect(mayDecide(run, { id: 'U1', channel: 'slack' }, [])).toBe(true);
  });

  it('names a person by name, else by id', () => {
    expect(who(requester)).toBe('Ada');
    expect(who({ id: 'U2', channel: 'slack' })).toBe('U2');
  });

  it('a sentence keeps the people it names apart from its text, and reads plainly with their names', () => {
    const bob: Actor = { id: 'U2', channel: 'slack' };
    const said = sentence`Approved by ${requester}; ${3} steps (${bob})`;
    expect(said).toEqual(['Approved by ', { person: requester }, '; ', '3', ' steps (', { person: bob }, ')']);
    expect(plainText(said)).toBe('Approved by Ada; 3 steps (U2)');
  });
});

/**
 * `DelegationFlow.started`: a child run that starts while its parent is paused is paused before its first call, and
 * a Resume of the parent racing that pause never leaves the child paused under a running parent. The store and the
 * decisions are in memory: a decision moves a run as Steward's would (pause from running, resume from paused).
 */
import { describe, expect, it } from 'vitest';
import type { InboundDecision } from '../../../src/engine/channel.ts';
import type { DelegationStore } from '../../../src/engine/assistant/delegations.ts';
import { DelegationFlow } from '../../../src/engine/flows/delegation-flow.ts';
import type { AssistantStore } from '../../../src/engine/assistant/assistants.ts';
import type { StoredRun } from '../../../src/engine/ports.ts';
import { DEFAULT_DELEGATION_LIMITS } from '../../../src/engine/assistant/delegations.ts';

const ada = { id: 'ada', channel: 'console' };

function world(parentStatus: StoredRun['status'], childStatus: StoredRun['status']) {
  const run = (id: string, status: StoredRun['status'], parentRunId?: string) =>
    ({ id, status, revision: 0, requester: ada, ...(parentRunId && { parentRunId }) }) as unknown as StoredRun;
  const runs = new Map([
    ['P', run('P', parentStatus)],
    ['C', run('C', childStatus, 'P')],
  ]);
  const decided: string[] = [];
  /** Runs before a read returns: the test's way to press something between two reads. */
  const beforeRead: Array<(id: string) => Promise<void>> = [];
  const move = (id: string, from: StoredRun['status'], to: StoredRun['status']) => {
    const r = runs.get(id)!;
    if (r.status === from) runs.set(id, { ...r, status: to });
  };
  const decide = async (d: InboundDecision) => {
    decided.push(`${d.action} ${d.runId}`);
    if (d.action === 'pause') move(d.runId, 'running', 'paused');
    if (d.action === 'resume') move(d.runId, 'paused', 'running');
  };
  const delegations = {
    childrenOf: async () => [{ childRunId: 'C', endedAt: null }],
  } as unknown as DelegationStore;
  const store = {
    getRun: async (id: string) => {
      await beforeRead.shift()?.(id);
      const r = runs.get(id);
      return r ? { ...r } : null;
    },
  };
  const flow = new DelegationFlow(
    {
      store,
      delegations,
      assistants: {} as AssistantStore,
      clock: () => new Date(),
      newId: () => 'x',
      log: () => undefined,
      limits: DEFAULT_DELEGATION_LIMITS,
    },
    { startChild: async () => undefined, decide },
  );
  return { flow, runs, decided, beforeRead, move, child: () => runs.get('C')! };
}

describe('a delegated run starting while its parent is paused', () => {
  it('is paused before anything else, as its requester', async () => {
    const w = world('paused', 'running');
    await w.flow.started(w.child());
    expect(w.child().status).toBe('paused');
    expect(w.decided).toEqual(['pause C']);
  });

  it('is left alone when its parent runs, or when it is paused already (restored after a restart)', async () => {
    const running = world('running', 'running');
    await running.flow.started(running.child());
    expect(running.decided).toEqual([]);
    const restored = world('paused', 'paused');
    await restored.flow.started(restored.child());
    expect(restored.decided).toEqual([]);
  });

  it('is resumed when the parent was resumed between the check and its pause', async () => {
    const w = world('paused', 'running');
    // The first read (the parent's) sees it paused; before the second, a person resumes the parent, whose Resume
    // finds the child still running and passes it by.
    w.beforeRead.push(async () => undefined);
    w.beforeRead.push(async () => {
      w.move('P', 'paused', 'running');
      await w.flow.propagate('P', 'resume', ada);
    });
    await w.flow.started(w.child());
    expect(w.runs.get('P')!.status).toBe('running');
    expect(w.child().status).toBe('running');
    expect(w.decided).toEqual(['pause C', 'resume C']);
  });
});

/**
 * A breakpoint after a step is shown only once that step's end is stored: a person who asks how it goes the moment
 * the breakpoint card appears is told the step finished, with its result, not that it is still running. (Found by CI
 * under load: the card came while the step's end was still on its way to the database, and the status reply said
 * "0/2 steps finished … Running now".) The store here writes step ends slowly, as a busy database does.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import type { StepAttemptWrite, StepsRecorded } from '../../src/engine/ports.ts';
import type { RunStatus } from '../../src/engine/types.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A store that takes a while to write step ends, and keeps the order of those writes and of the run's pauses. */
class SlowEnds extends PgRunStore {
  readonly order: string[] = [];

  override async recordSteps(w: StepAttemptWrite): Promise<StepsRecorded> {
    if (w.ended.length === 0) return super.recordSteps(w);
    await delay(300);
    const recorded = await super.recordSteps(w);
    this.order.push(...w.ended.map((e) => `${e.stepId} ended`));
    return recorded;
  }

  override async transition(...args: Parameters<PgRunStore['transition']>): Promise<boolean> {
    const to: RunStatus = args[2];
    if (to === 'paused') this.order.push('paused');
    return super.transition(...args);
  }
}

it('a status asked as the breakpoint card shows finds the step ended, with its result', async () => {
  let store: SlowEnds | undefined;
  h = await startHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({
      planner: [
        planReply([
          { id: 'first', tool: 'everything.echo', args: { message: 'one' } },
          { id: 'second', tool: 'everything.echo', args: { message: 'two' }, dependsOn: ['first'] },
        ]),
      ],
      classifier: ['status'],
      synthesizer: ['Both said.'],
    }),
    store: (db) => (store = new SlowEnds(db)),
  });
  await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());
  await h.type('say one then two');
  await h.waitFor(/revision 0, risk LOW/);
  await h.type('break first');
  await h.type('approve');
  await h.waitFor(/=== Breakpoint after first ===/);
  await h.type('how is it going?');
  await h.waitFor(/Run paused: \d\/2 steps finished/);
  expect(h.output()).toMatch(/Run paused: 1\/2 steps finished\.\n• first succeeded: Echo: one\n/);
  expect(store!.order.slice(0, 2)).toEqual(['first ended', 'paused']);
  await h.type('continue');
  await h.waitFor(/=== Report \(completed\) ===\nBoth said\./);
});

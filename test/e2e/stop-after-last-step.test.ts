/**
 * A Stop that crosses the last step finishing (found by the chaos run, seed 11): the run had nothing left to stop
 * and was ending completed, yet the Stop was accepted ("Stopping"), so the person was told one thing and the report
 * said another. Now such a press is refused, saying why, and recorded as refused. The console harness holds the run's
 * end at a gate (its store's move to `completed`), so the press lands in that window every time.
 */
import { afterEach, expect, it } from 'vitest';
import type { RunStatus } from '../../src/engine/types.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A store whose first move of a run to `completed` waits until the test opens the gate. */
class EndAtGate extends PgRunStore {
  reached = false;
  open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  override async transition(...args: Parameters<PgRunStore['transition']>): Promise<boolean> {
    const to: RunStatus = args[2];
    if (to === 'completed' && !this.reached) {
      this.reached = true;
      await this.gate;
    }
    return super.transition(...args);
  }
}

it('Stop pressed after the last step finished is refused, saying so, and the run reports completed', async () => {
  let store: EndAtGate | undefined;
  h = await startHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({
      planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }])],
      synthesizer: ['Said hi.'],
    }),
    store: (db) => (store = new EndAtGate(db)),
  });
  const harness = h;
  await harness.type('say hi');
  await waitUntil('the run to reach its end', () => store!.reached, { details: () => harness.output() });
  await harness.type('stop');
  await harness.waitFor(/Cannot stop: every step has already finished; the report is coming\./);
  store!.open();
  await harness.waitFor(/=== Report \(completed\) ===\nSaid hi\./);
  const run = await onlyRun(harness);
  expect(run.status).toBe('completed');
  const decisions = await harness.db.db.selectFrom('decisions').select(['action', 'accepted']).execute();
  expect(decisions).toEqual([{ action: 'stop', accepted: false }]);
  expect(harness.output()).not.toMatch(/Stopping/);
});

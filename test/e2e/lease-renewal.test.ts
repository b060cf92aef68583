/**
 * Leases stay renewed while their holder is busy (issue 26). Found by the chaos run: a process that took over many
 * runs at once spent longer than a lease writing and posting their reports, one after the other; the leases of the
 * runs it was driving, and of the runs it had claimed but not reached yet, lapsed meanwhile, and a peer took them
 * over, so both posted the same report. Here the console harness holds a run at its card while it takes over two runs
 * that ended owing their reports, the first of which the model takes four leases to write, and a peer store (another
 * process, by its owner name) tries to take runs over all the while.
 */
import { afterEach, expect, it } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// Two seconds: a busy CI machine (two cores, three test files at once) can stall an event loop for a second.
const LEASE_MS = 2_000;
const oneEcho = [{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }];

/** A run a dead process left ended and owing its report. */
async function endedOwingReport(harness: Harness, request: string): Promise<void> {
  const id = crypto.randomUUID();
  const at = new Date();
  const { store } = harness;
  const conversation = { channel: 'console', key: 'console' };
  await store.createRun({ id, conversation, requester: { id: 'ada', channel: 'console' }, request, at });
  await store.saveRevision(id, 0, planSchema.parse(JSON.parse(planReply(oneEcho))), 'planned', at);
  await store.transition(id, ['planning'], 'completed', { at, reportDue: true });
}

it('a takeover round longer than a lease lets no lease of this process lapse, so no peer takes its runs', async () => {
  const synthesizer = [{ text: 'Said hello first.', delayMs: 4 * LEASE_MS }, 'Said hello second.'];
  const harness = await startHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    settings: { leaseMs: LEASE_MS },
    script: byRole({ planner: [planReply(oneEcho)], synthesizer }),
  });
  h = harness;
  await harness.steward.recover();
  // A run this process holds: waiting at its card, under review "all".
  await harness.type('review all');
  await harness.type('say hello');
  await harness.waitFor(/Type "approve"/);
  // Two runs to take over in one round; the first one's report takes four leases to write.
  await endedOwingReport(harness, 'say hello first');
  await endedOwingReport(harness, 'say hello second');
  await waitUntil('the takeover to ask the model for the first report', () =>
    harness.llm.requests.some((r) => r.role === 'synthesizer'),
  );
  const peer = new PgRunStore(harness.db.db);
  const taken: string[] = [];
  while (!/=== Report \(completed\) ===\nSaid hello second\./.test(harness.output())) {
    taken.push(...(await peer.claimOrphanedRuns(LEASE_MS, 20, [])).map((c) => c.run.request));
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(harness.output().match(/=== Report \(completed\) ===\n.*/g)).toEqual([
    '=== Report (completed) ===\nSaid hello first.',
    '=== Report (completed) ===\nSaid hello second.',
  ]);
  expect(taken).toEqual([]);
}, 60_000);

/**
 * Leases stay renewed while their holder is busy (issue 26): found by the chaos run, where a process that took over
 * many runs at once spent longer than a lease writing and posting their reports, let the leases of the runs it was
 * driving lapse meanwhile, and a peer took them over, so both posted the same report. Here the console harness holds
 * a run at its card while it takes over a run whose report the model takes four leases to write, and a peer store
 * (another process, by its owner name) tries to take runs over all the while.
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

const LEASE_MS = 1_000;
const oneEcho = [{ id: 'say', tool: 'everything.echo', args: { message: 'hello' } }];

it('a takeover round longer than a lease lets no lease of this process lapse, so no peer takes its runs', async () => {
  h = await startHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    settings: { leaseMs: LEASE_MS },
    script: byRole({ planner: [planReply(oneEcho)], synthesizer: [{ text: 'Said hello.', delayMs: 4 * LEASE_MS }] }),
  });
  await h.steward.recover();
  // A run this process holds: waiting at its card, under review "all".
  await h.type('review all');
  await h.type('say hello');
  await h.waitFor(/Type "approve"/);
  // A run a dead process left ended and owing its report: the next takeover round writes it, slowly.
  const orphan = crypto.randomUUID();
  const at = new Date();
  await h.store.createRun({
    id: orphan,
    conversation: { channel: 'console', key: 'console' },
    requester: { id: 'ada', channel: 'console' },
    request: 'say hello earlier',
    at,
  });
  await h.store.saveRevision(orphan, 0, planSchema.parse(JSON.parse(planReply(oneEcho))), 'planned', at);
  await h.store.transition(orphan, ['planning'], 'completed', { at, reportDue: true });

  const harness = h;
  await waitUntil('the takeover to ask the model for the report', () =>
    harness.llm.requests.some((r) => r.role === 'synthesizer'),
  );
  const peer = new PgRunStore(h.db.db);
  const taken: string[] = [];
  while (!/=== Report \(completed\) ===\nSaid hello\./.test(h.output())) {
    taken.push(...(await peer.claimOrphanedRuns(LEASE_MS, 20, [])).map((c) => c.run.id));
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(h.llm.requests.filter((r) => r.role === 'synthesizer')).toHaveLength(1);
  expect(taken).toEqual([]);
}, 30_000);

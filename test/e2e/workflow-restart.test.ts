/**
 * Steward down while a workflow's fire comes due (issue 15): when it is back, each schedule follows its catch-up
 * policy, once. The second Steward's clock is moved past the fire time, as if it came back twenty minutes late.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, testDatabaseUrlFor, type TestDatabase } from '../helpers/databases.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createAuditServer, planReply, startHarness, type AuditServer, type Harness } from './harness.ts';

let audit: AuditServer;
let database: TestDatabase | undefined;
const harnesses: Harness[] = [];
beforeEach(() => {
  audit = createAuditServer();
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close().catch(() => undefined);
  await database?.close();
  database = undefined;
  audit.remove();
});

const NAP = planReply([{ id: 'nap', tool: 'audit.sleep', args: { ms: 1 } }]);
const sleeps = () => audit.entries().filter((e) => e.name === 'sleep');

describe('a restart across a fire time (postgres)', () => {
  it('catch-up once runs the missed fire once when Steward is back; catch-up skip records it as missed', async () => {
    database = await createTestDatabase('postgres');
    const url = testDatabaseUrlFor(database.name);
    // A daily time two to three minutes ahead, so nothing fires while the first Steward runs.
    const due = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 120_000);
    const cron = `${due.getUTCMinutes()} ${due.getUTCHours()} * * *`;

    const first = await startHarness({
      db: { url },
      servers: [audit.config()],
      script: byRole({ planner: [NAP], synthesizer: 'Napped.' }),
    });
    harnesses.push(first);
    await first.steward.recover();
    await first.type('nap for a millisecond');
    await first.waitFor(/=== Report \(completed\) ===/);
    await first.type('save nap');
    await first.type('fork nap nap-skip');
    await first.type(`schedule nap "${cron}" UTC catch-up once`);
    await first.type(`schedule nap-skip "${cron}" UTC catch-up skip`);
    await first.waitFor(/Scheduled nap-skip/);
    await first.close();
    harnesses.length = 0;

    // Back twenty minutes after the fire time: no planner is scripted, so a planner call would fail the run.
    const shift = due.getTime() + 20 * 60_000 - Date.now();
    const second = await startHarness({
      db: { url },
      servers: [audit.config()],
      script: byRole({ synthesizer: 'Napped again.' }),
      clock: () => new Date(Date.now() + shift),
    });
    harnesses.push(second);
    await second.steward.recover();
    const fires = await waitUntil('both schedules to decide their missed fire', async () => {
      const rows = await second.db.db
        .selectFrom('workflow_fires')
        .innerJoin('workflows', 'workflows.id', 'workflow_fires.workflow_id')
        .select(['workflows.name', 'workflow_fires.outcome', 'workflow_fires.scheduled_at', 'workflow_fires.run_id'])
        .orderBy('workflows.name')
        .execute();
      return rows.length === 2 && rows;
    });
    expect(fires.map((f) => [f.name, f.outcome, f.scheduled_at.toISOString()])).toEqual([
      ['nap', 'started', due.toISOString()],
      ['nap-skip', 'skipped_missed', due.toISOString()],
    ]);
    await waitUntil(
      'the caught-up run to finish',
      async () => (await second.store.getRun(fires[0]!.run_id!))?.status === 'completed',
    );
    expect(sleeps()).toHaveLength(2);
    expect(second.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(0);
  });
});

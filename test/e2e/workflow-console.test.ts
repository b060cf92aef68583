import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, useAuditHarness, type Harness } from './harness.ts';

const t = useAuditHarness();

const NAP = planReply([{ id: 'nap', tool: 'audit.sleep', args: { ms: 1 } }]);

/** The planner requests the fake model received: a workflow's fire must add none. */
const plannerCalls = (harness: Harness) => harness.llm.requests.filter((r) => r.role === 'planner').length;

/** The sleep calls the audit server received, by their `ms` argument. */
const sleeps = () => t.audit.entries().filter((e) => e.name === 'sleep');

async function savedNap(db: 'postgres' | 'pglite' = 'postgres'): Promise<Harness> {
  const harness = await t.start({
    db,
    servers: [t.audit.config()],
    script: byRole({ planner: [NAP], synthesizer: 'Napped.' }),
  });
  // As the app does at start: resume what needs an owner, then keep the schedules' timer.
  await harness.steward.recover();
  await harness.type('nap for a millisecond');
  // The whole report, to its last line: its heading is printed as it starts streaming.
  await harness.waitFor(/=== Report \(completed\) ===\nNapped\.\n/);
  await harness.type('save nap');
  await harness.waitFor(/Saved workflow "nap" \(version 1\) from run/);
  return harness;
}

describe('recurring workflows in the console', () => {
  it.each(['postgres', 'pglite'] as const)(
    'a saved workflow fires on its schedule with no planner call, and every fire is recorded with its run (%s)',
    async (db) => {
      const harness = await savedNap(db);
      await harness.type('schedule nap "* * * * * *" UTC');
      await harness.waitFor(/Scheduled nap/);
      const fired = await waitUntil('two fires to finish', async () => {
        const rows = await harness.db.db
          .selectFrom('workflow_fires')
          .innerJoin('runs', 'runs.id', 'workflow_fires.run_id')
          .select(['workflow_fires.scheduled_at', 'workflow_fires.outcome', 'runs.status'])
          .where('runs.status', '=', 'completed')
          .execute();
        return rows.length >= 2 && rows;
      });
      await harness.type('schedule nap pause');
      await harness.waitFor(/Paused the schedule of "nap"/);
      await harness.steward.idle();

      expect(plannerCalls(harness)).toBe(1);
      expect(fired.every((f) => f.outcome === 'started')).toBe(true);
      // The server saw the first run's call and one per fire that started, never one twice.
      const fires = await harness.db.db.selectFrom('workflow_fires').selectAll().execute();
      expect(sleeps()).toHaveLength(1 + fires.filter((f) => f.outcome === 'started').length);
      expect(new Set(fires.map((f) => f.scheduled_at.toISOString())).size).toBe(fires.length);

      await harness.type('workflows');
      await harness.waitFor(/nap/);
    },
  );

  it('runs are named by their short id (the save and a run now say 8 characters, never the full id), in i-notices', async () => {
    const harness = await savedNap();
    const [first] = await harness.db.db.selectFrom('runs').select('id').execute();
    const short = first!.id.slice(0, 8);
    // Workflow answers are notices like every other, with the same prefix.
    expect(harness.output()).toContain(`\ni Saved workflow "nap" (version 1) from run ${short}:`);
    await harness.type('workflow nap run');
    await harness.waitFor(/^i Running "nap" version 1 now \(run [0-9a-f]{8}\)/m);
    await waitUntil('the fire to finish', () => sleeps().length === 2);
    await harness.steward.idle();
    await harness.type('workflow nap');
    await harness.waitFor(new RegExp(`saved from run ${short}\\b`));
    const ids = (await harness.db.db.selectFrom('runs').select('id').execute()).map((r) => r.id);
    for (const id of ids) expect(harness.output()).not.toContain(id);
  });

  it('a refused workflow command prints with "!", as every other refusal on the console; one that did its work with "i"', async () => {
    const harness = await savedNap();
    await harness.type('workflow nope run');
    await harness.waitFor(/^! There is no workflow named "nope"\. `workflows` lists yours\.$/m);
    await harness.type('schedule nap pause');
    await harness.waitFor(/^! "nap" has no schedule\.$/m);
    await harness.type('workflow nap review sometimes');
    await harness.waitFor(/^! Say every-fire or saved: /m);
    await harness.type('workflow nap review every-fire');
    await harness.waitFor(/^i Each fire of "nap" now waits for approval\.$/m);
    await harness.type('workflows');
    await harness.waitFor(/^i Workflows \(1\):$/m);
    // Only the answers that did what was asked read as information.
    expect(harness.output()).not.toMatch(/^i (There is no workflow|"nap" has no schedule|Say every-fire)/m);
  });

  it('a stored schedule the cron library cannot read is logged and never holds back the other schedules', async () => {
    const harness = await savedNap();
    await harness.type('fork nap broken');
    await harness.type('schedule broken "* * * * * *" UTC');
    await harness.waitFor(/Scheduled broken/);
    // As if this machine's time-zone data lost the zone after the schedule was stored.
    await harness.db.db.updateTable('workflow_schedules').set({ time_zone: 'Mars/Base' }).execute();
    await harness.type('schedule nap "* * * * * *" UTC');
    await waitUntil('a fire of nap to finish', () => sleeps().length >= 2);
    await harness.type('schedule nap pause');
    await harness.steward.idle();
    expect(harness.logs.some((l) => /workflow broken, schedule .* in Mars\/Base cannot fire/.test(l))).toBe(true);
    const fired = await harness.db.db
      .selectFrom('workflow_fires')
      .innerJoin('workflows', 'workflows.id', 'workflow_fires.workflow_id')
      .select('workflows.name')
      .execute();
    expect(fired.length).toBeGreaterThan(0);
    expect(fired.every((f) => f.name === 'nap')).toBe(true);
  });

  it('a schedule that cannot fire is refused with the reason; a valid one shows its next three times', async () => {
    const harness = await savedNap();
    await harness.type('schedule nap "0 9 * * FUNDAY" Europe/Berlin');
    await harness.waitFor(/^! That schedule was refused: .*/m);
    await harness.type('schedule nap "0 9 * * MON" Mars/Base');
    await harness.waitFor(/Unknown time zone "Mars\/Base"/);
    await harness.type('schedule nap "0 9 * * MON" Europe/Berlin');
    const answer = await harness.waitFor(/Scheduled nap[^\n]*\n?[^\n]*Next: [^\n]+/);
    expect(answer.match(/Mon \d{4}-\d{2}-\d{2} 09:00/g)).toHaveLength(3);
  });

  it('a tool redefined between two fires holds the second fire with the change shown; nothing is called', async () => {
    const mutate = planReply([{ id: 'm', tool: 'audit.mutate', args: {} }]);
    const harness = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({ planner: [NAP, mutate], synthesizer: 'Done.' }),
    });
    await harness.type('nap for a millisecond');
    await harness.waitFor(/=== Report \(completed\) ===/);
    await harness.type('save nap');
    await harness.waitFor(/Saved workflow "nap"/);
    await harness.type('workflow nap run');
    await waitUntil('the first fire to finish', () => sleeps().length === 2);
    await harness.steward.idle();

    // Someone changes the tool's definition between fires (a rug pull).
    await harness.type('new change the sleep tool');
    await harness.waitFor(/risk/);
    await harness.type('approve');
    await waitUntil('the mutation', () => t.audit.entries().some((e) => e.name === 'mutate'));
    await harness.steward.idle();

    const before = harness.output().length;
    await harness.type('workflow nap run');
    await harness.waitFor(
      /ada: Workflow nap v1: run now of .* waits for your approval\. .*The tool audit\.sleep changed since the workflow was saved: description/,
      15_000,
      before,
    );
    expect(sleeps()).toHaveLength(2);
    expect(plannerCalls(harness)).toBe(2);
    await harness.type('cancel');
    await harness.waitFor(/Cancelled by/, 15_000, before);
    expect(sleeps()).toHaveLength(2);
  });

  it('amend in words: one planner call, reviewed; approving saves version 2 and runs nothing; old versions stay', async () => {
    const twoNaps = planReply([
      { id: 'nap', tool: 'audit.sleep', args: { ms: 1 } },
      { id: 'nap2', tool: 'audit.sleep', args: { ms: 2 }, dependsOn: ['nap'] },
    ]);
    const harness = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({ planner: [NAP, twoNaps], synthesizer: 'Napped.' }),
    });
    await harness.type('nap for a millisecond');
    await harness.waitFor(/=== Report \(completed\) ===/);
    await harness.type('save nap');
    await harness.waitFor(/Saved workflow "nap"/);
    const before = harness.output().length;
    await harness.type('workflow nap amend also nap for 2 ms after it');
    await harness.waitFor(
      /Amendment of workflow nap \(version 1\): Approve saves this plan as version 2/,
      15_000,
      before,
    );
    await harness.waitFor(/waits for approval in its conversation/, 15_000, before);
    expect(plannerCalls(harness)).toBe(2);
    await harness.type('approve');
    await harness.waitFor(
      /"nap" is now at version 2 \(risk low\); its next fires run it\. Nothing was run now\./,
      15_000,
      before,
    );
    expect(sleeps()).toHaveLength(1);

    await harness.type('workflow nap version 1');
    await harness.waitFor(
      /Workflow nap, version 1 \(the current version is 2\)[\s\S]*?Steps:\n {2}1\. nap: audit\.sleep \{"ms":1\}\nBuilt-in/,
      15_000,
      before,
    );
    await harness.type('workflow nap run');
    await waitUntil('version 2 to run both naps', () => sleeps().length === 3);
    await harness.steward.idle();
    expect(sleeps().map((e) => e.args)).toEqual([{ ms: 1 }, { ms: 1 }, { ms: 2 }]);
    expect(plannerCalls(harness)).toBe(2);
  });
});

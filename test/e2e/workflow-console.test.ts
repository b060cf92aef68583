import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import type { StewardSettings } from '../../src/engine/flows/deps.ts';
import { DEFAULT_SCHEDULE_LIMITS } from '../../src/engine/workflow/schedule-limits.ts';
import { startHarness, planReply, useAuditHarness, type Harness } from './harness.ts';

const t = useAuditHarness();

const NAP = planReply([{ id: 'nap', tool: 'audit.sleep', args: { ms: 1 } }]);

/** The planner requests the fake model received: a workflow's fire must add none. */
const plannerCalls = (harness: Harness) => harness.llm.requests.filter((r) => r.role === 'planner').length;

/** A line the console must show, word for word. */
const line = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm');

/** The sleep calls the audit server received, by their `ms` argument. */
const sleeps = () => t.audit.entries().filter((e) => e.name === 'sleep');

/** The operator's limits these tests fire under: to the second, so a fire comes within a second. */
const EVERY_SECOND: Partial<StewardSettings> = {
  scheduleLimits: { ...DEFAULT_SCHEDULE_LIMITS, seconds: true, minIntervalMs: 0 },
};

async function savedNap(
  db: 'postgres' | 'pglite' | { url: string } = 'postgres',
  settings: Partial<StewardSettings> = EVERY_SECOND,
  start: typeof startHarness = t.start,
): Promise<Harness> {
  const harness = await start({
    db,
    servers: [t.audit.config()],
    script: byRole({ planner: [NAP], synthesizer: 'Napped.' }),
    settings,
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

  it('with the README defaults, a schedule to the second or every minute is refused, saying what would be allowed', async () => {
    const harness = await savedNap('postgres', {});
    await harness.type('schedule nap "* * * * * *" UTC');
    await harness.waitFor(
      line(
        "! That schedule was refused: schedules to the second are off here (the operator's STEWARD_SCHEDULE_SECONDS); without the seconds field it reads `* * * * *`.",
      ),
    );
    await harness.type('schedule nap "* * * * *" UTC');
    await harness.waitFor(
      line(
        "! That schedule was refused: `* * * * *` fires every minute at its closest, and schedules here fire at most every 5 minutes (the operator's STEWARD_SCHEDULE_MIN_MINUTES). Try `*/5 * * * *`.",
      ),
    );
    // Two times close together once a day are as much a burst as every minute.
    await harness.type('schedule nap "0,1 9 * * *" UTC');
    await harness.waitFor(/! That schedule was refused: `0,1 9 \* \* \*` fires every minute at its closest/);
    await harness.type('schedule nap "*/5 * * * *" UTC');
    await harness.waitFor(/^i Scheduled nap/m);
    const stored = await harness.db.db.selectFrom('workflow_schedules').select('cron').execute();
    expect(stored).toEqual([{ cron: '*/5 * * * *' }]);
  });

  it('a person may have only so many live schedules: the next is refused, and so is resuming one past the cap', async () => {
    const harness = await savedNap('postgres', { scheduleLimits: { ...DEFAULT_SCHEDULE_LIMITS, perPerson: 2 } });
    for (const name of ['nap-b', 'nap-c']) await harness.type(`fork nap ${name}`);
    await harness.type('schedule nap "0 9 * * *" UTC');
    await harness.type('schedule nap-b "0 10 * * *" UTC');
    await harness.waitFor(/^i Scheduled nap-b/m);
    await harness.type('schedule nap-c "0 11 * * *" UTC');
    await harness.waitFor(
      line(
        "! That schedule was refused: you have 2 live schedules, the most one person may have (the operator's STEWARD_SCHEDULES_PER_PERSON). Pause or delete one first (`workflows` lists them).",
      ),
    );
    // Pausing one makes room; resuming it once the room is taken again is refused, and it stays paused.
    await harness.type('schedule nap pause');
    await harness.waitFor(/^i Paused the schedule of "nap"/m);
    await harness.type('schedule nap-c "0 11 * * *" UTC');
    await harness.waitFor(/^i Scheduled nap-c/m);
    await harness.type('schedule nap resume');
    await harness.waitFor(/^! No more can be resumed: you have 2 live schedules/m);
    const rows = await harness.db.db
      .selectFrom('workflow_schedules')
      .innerJoin('workflows', 'workflows.id', 'workflow_schedules.workflow_id')
      .select(['workflows.name', 'workflow_schedules.paused'])
      .orderBy('workflows.name')
      .execute();
    expect(rows).toEqual([
      { name: 'nap', paused: true },
      { name: 'nap-b', paused: false },
      { name: 'nap-c', paused: false },
    ]);
  });

  it('a workflow past its fires a day is skipped and recorded at each fire, never queued into a burst', async () => {
    const harness = await savedNap('postgres', {
      scheduleLimits: { ...DEFAULT_SCHEDULE_LIMITS, seconds: true, minIntervalMs: 0, firesPerDay: 2 },
    });
    await harness.type('schedule nap "* * * * * *" UTC');
    await harness.waitFor(/Scheduled nap/);
    const fires = await waitUntil('two fires skipped over the limit', async () => {
      const rows = await harness.db.db.selectFrom('workflow_fires').select(['outcome', 'run_id', 'note']).execute();
      return rows.filter((r) => r.outcome === 'skipped_limit').length >= 2 && rows;
    });
    await harness.type('schedule nap pause');
    await harness.waitFor(/Paused the schedule of "nap"/);
    await harness.steward.idle();
    const started = fires.filter((f) => f.run_id !== null);
    expect(started).toHaveLength(2);
    expect(fires.filter((f) => f.outcome === 'skipped_limit').every((f) => f.run_id === null)).toBe(true);
    // The server saw the first run's call and the two fires' calls; nothing more came later.
    await harness.steward.idle();
    expect(sleeps()).toHaveLength(3);
    expect(fires.find((f) => f.outcome === 'skipped_limit')?.note).toContain(
      "this workflow started 2 runs in the last 24 hours, its limit (the operator's STEWARD_WORKFLOW_FIRES_PER_DAY)",
    );
    await harness.type('workflow nap');
    await harness.waitFor(/skipped, over the limit of fires a day: this workflow started 2 runs/);
  });

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
    // Far ahead, so it cannot fire before its zone is lost below (a busy machine may take seconds between the two).
    await harness.type('schedule broken "0 9 1 1 *" UTC');
    await harness.waitFor(/Scheduled broken/);
    // As if this machine's time-zone data lost the zone after the schedule was stored; and it is due now.
    await harness.db.db
      .updateTable('workflow_schedules')
      .set({ time_zone: 'Mars/Base', next_fire_at: new Date() })
      .execute();
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

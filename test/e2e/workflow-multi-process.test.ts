/**
 * Issue 15's guarantee across processes: three real Steward processes (src/main.ts, Slack HTTP mode) on one private
 * PostgreSQL, all with the same schedule, fire each scheduled time once, and one killed midway loses no fire. What
 * counts is what the tool server really received: every call carries its fire's scheduled time (`fire.time`).
 */
import { NO_SCHEDULE_CAPS } from '../../src/engine/workflows.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import { CronerCalendar } from '../../src/cron/croner-calendar.ts';
import { CHAOS_AUDIT_SCRIPT, startChaosCluster, type ChaosCluster } from '../chaos/chaos-cluster.ts';
import { mcpConfig, serverConfig } from '../helpers/mcp-servers.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing } from '../helpers/private-postgres.ts';
import type { StewardProcess } from '../helpers/steward-process.ts';
import { waitUntil } from '../helpers/wait.ts';
import { databaseAt } from './harness.ts';

describeNeeding(privatePostgresMissing, 'workflow fires across processes', () => {
  let cluster: ChaosCluster | undefined;
  const closing: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await cluster?.close();
    cluster = undefined;
  });

  /** A workflow whose one step sends its fire's time to the chaos server, every 2 seconds, as the processes see it. */
  async function seedTicking(c: ChaosCluster): Promise<{ workflows: PgWorkflowStore; scheduleId: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'steward-seed-'));
    closing.push(() => rmSync(dir, { recursive: true, force: true }));
    const chaos = serverConfig('chaos', {
      command: process.execPath,
      args: [CHAOS_AUDIT_SCRIPT],
      env: { AUDIT_LOG: join(dir, 'seed.jsonl'), AUDIT_CALLER: 'seed' },
    });
    // The definitions each process will see, pinned as a person's approval would pin them.
    const { host } = await McpHost.connect(mcpConfig(chaos));
    const tool = host.listTools().find((t) => t.name === 'chaos.wait')!;
    await host.close();
    const db = await databaseAt(c.databaseUrl);
    closing.push(() => db.close());
    const workflows = new PgWorkflowStore(db.db, { owner: 'seed' });
    const plan = planSchema.parse({
      summary: 'Tick',
      needsTools: true,
      steps: [{ id: 'tick', tool: 'chaos.wait', args: { tag: { $ref: 'fire.time' }, ms: 50 } }],
    });
    const owner = { id: 'U0ADA', channel: 'slack' };
    const at = new Date();
    await workflows.createWorkflow(
      {
        ...{
          id: 'wf-tick',
          name: 'tick',
          owner,
          conversation: { channel: 'slack', key: 'C0GENERAL:1700000000.000100' },
        },
        review: 'saved',
        first: {
          plan,
          pins: [{ tool: tool.name, fingerprint: tool.fingerprint, definition: tool.definition }],
          risk: 'low',
          note: 'seeded by the test',
          sourceRunId: null,
          createdBy: owner,
        },
      },
      at,
    );
    const cron = '*/2 * * * * *';
    const [nextFireAt] = new CronerCalendar().next(cron, 'UTC', new Date(at.getTime() + 3_000), 1);
    const schedule = { id: 'sch-tick', workflowId: 'wf-tick', cron, timeZone: 'UTC', nextFireAt: nextFireAt! };
    await workflows.addSchedule(
      { ...schedule, catchUp: 'once', overlap: 'skip', createdBy: owner },
      at,
      NO_SCHEDULE_CAPS,
    );
    return { workflows, scheduleId: schedule.id };
  }

  /** For each scheduled time the chaos server received a call for, the processes whose call for it ended. */
  function endedByFire(c: ChaosCluster): Map<string, string[]> {
    const callers = new Map<string, string[]>();
    for (const line of c.audit()) {
      const tag = line.args.tag ?? '';
      if (line.type !== 'ended' || !/^\d{4}-\d{2}-\d{2}T/.test(tag)) continue;
      callers.set(tag, [...(callers.get(tag) ?? []), line.caller]);
    }
    return callers;
  }

  it('three processes with the same schedule fire each scheduled time once; one killed midway loses none', async () => {
    const c = await startChaosCluster({ processes: 3, env: { STEWARD_LEASE_SECONDS: '5' } });
    cluster = c;
    const [p1] = c.processes as [StewardProcess, StewardProcess, StewardProcess];
    await Promise.all(c.processes.map((p) => p.start()));
    const { workflows, scheduleId } = await seedTicking(c);

    await waitUntil('three fires to end at the server', () => endedByFire(c).size >= 3, { timeoutMs: 30_000 });
    await p1.kill('SIGKILL');
    const afterKill = endedByFire(c).size;
    await waitUntil('three more fires, with p1 gone', () => endedByFire(c).size >= afterKill + 3, {
      timeoutMs: 30_000,
    });
    await workflows.pauseSchedule(scheduleId, new Date());

    const { rows } = await c.pool.query<{ scheduled_at: Date; outcome: string; run_id: string | null }>(
      "SELECT scheduled_at, outcome, run_id FROM workflow_fires WHERE workflow_id = 'wf-tick'",
    );
    const started = rows.filter((r) => r.outcome === 'started');
    await waitUntil(
      'every fired run to end (a run p1 held is taken over once its lease lapses)',
      async () => {
        const { rows: runs } = await c.pool.query<{ status: string }>(
          'SELECT status FROM runs WHERE id = ANY($1::text[])',
          [started.map((r) => r.run_id)],
        );
        return runs.length === started.length && runs.every((r) => r.status === 'completed');
      },
      { timeoutMs: 30_000 },
    );

    // One fire row and one run per scheduled time. At the server, each fire's call ended once at a live process; a
    // call in flight at p1 when it was killed may also have ended there, its run then taken over and the idempotent
    // step sent again, as the restart rules say, but never twice by live processes.
    expect(new Set(rows.map((r) => r.scheduled_at.toISOString())).size).toBe(rows.length);
    expect(new Set(started.map((r) => r.run_id)).size).toBe(started.length);
    const ended = endedByFire(c);
    for (const fire of started) {
      const tag = [...ended.keys()].find((t) => Date.parse(t) === fire.scheduled_at.getTime());
      expect(tag, `the call of the fire at ${fire.scheduled_at.toISOString()}`).toBeDefined();
      const callers = ended.get(tag!)!;
      expect(
        callers.length === 1 || (callers.length === 2 && callers.filter((p) => p === 'p1').length === 1),
        `${tag}: ${callers.join(', ')}`,
      ).toBe(true);
    }
    expect(ended.size).toBe(started.length);
    // No planner call: the fake model saw none.
    expect(c.llm.requests.filter((r) => r.role === 'planner')).toHaveLength(0);
  });
});

/**
 * Section 8 (issue 15): 1,000 workflow schedules due at the same instant on one Steward process. Each workflow is
 * seeded through the store (a one-step plan calling `audit.lookup` with its own name and the fire's time, pinned
 * to the tool's definition, risk low, runs on its saved approval) with one daily schedule at T, the start of a minute
 * at least 15 s ahead. Steward starts its scheduler (`recover`), and the bench waits until every fired run has sent
 * its report, then reads what happened from the database, the audit server's log and the fake LLM's counts.
 * `WORKFLOW_BENCH_COUNT` changes the 1,000; `WORKFLOW_BENCH_PROFILE=1` adds a CPU profile of the fire window
 * (also written to bench/out/workflow-fires.cpuprofile).
 *
 * Standalone: `npx tsx bench/workflow-fires.ts` prints the section and writes its rows to
 * bench/out/workflow-fires.jsonl.
 */
import { NO_SCHEDULE_CAPS } from '../src/engine/workflows.ts';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { newPins } from '../src/engine/plan/tool-pins.ts';
import { planSchema } from '../src/engine/plan/plan-schema.ts';
import { quantile } from './stats.ts';
import { busyMs, profileCpu, topInclusive, topSelf, type CpuProfile } from './cpu-profile.ts';
import { startCpuWindow, type CpuWindow } from './workflow-cpu.ts';
import { renderWorkflowFires, type WorkflowFiresResult } from './workflow-report.ts';
import { startWorkflowLlm } from './workflow-llm.ts';
import { startWorkflowSteward, type WorkflowSteward } from './workflow-steward.ts';

const OUT = join(import.meta.dirname, 'out');
/** How far ahead of now the fire time is at least, so seeding and the scheduler's start are over before it. */
const LEAD_MS = 15_000;
/** Seeding writes at once (Steward's pool has 10 connections). */
const SEED_AT_ONCE = 8;
const OWNER = { id: 'bench-owner', name: 'Bench', channel: 'console' };

/** What the section produced: its Markdown, its JSON rows and the figures. */
export interface WorkflowFiresSection {
  markdown: string[];
  rows: object[];
  result: WorkflowFiresResult;
}

const label = (i: number) => `wf-${String(i + 1).padStart(4, '0')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Runs the section; `count` schedules (default `WORKFLOW_BENCH_COUNT` or 1,000). */
export async function benchWorkflowFires(
  o: { count?: number; log?: (line: string) => void } = {},
): Promise<WorkflowFiresSection> {
  const count = o.count ?? (Number(process.env['WORKFLOW_BENCH_COUNT']) || 1000);
  const log = o.log ?? ((line: string) => process.stderr.write(`bench: ${line}\n`));
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'steward-wf-bench-'));
  const auditLog = join(dir, 'audit.jsonl');
  const llm = await startWorkflowLlm();
  let app: WorkflowSteward | undefined;
  try {
    app = await startWorkflowSteward({ llmBaseURL: llm.baseURL, auditLog });
    log(`workflows: seeding ${count} workflows`);
    const ids = await seedWorkflows(app, count);
    const at = new Date(Math.ceil((Date.now() + LEAD_MS) / 60_000) * 60_000);
    await seedSchedules(app, ids, at);
    log(`workflows: ${count} schedules due at ${at.toISOString()}; starting the scheduler`);
    await app.steward.recover();
    await sleep(at.getTime() - 1000 - Date.now());
    const eld = monitorEventLoopDelay({ resolution: 10 });
    eld.enable();
    app.statements.reset();
    const cpuWindow = startCpuWindow();
    const timeoutMs = 120_000 + count * 100;
    const wait = () => app!.reported(count, timeoutMs);
    let profile: CpuProfile | undefined;
    if (process.env['WORKFLOW_BENCH_PROFILE'] === '1') profile = (await profileCpu(wait)).profile;
    else await wait();
    eld.disable();
    const cpu = cpuWindow.stop();
    log('workflows: every fired run reported; reading the results');
    const planned = await llm.counts();
    const result = await measure(app, { ids, at, auditLog, count, eld, planned, cpu });
    result.sectionS = (performance.now() - started) / 1000;
    if (profile) {
      mkdirSync(OUT, { recursive: true });
      writeFileSync(join(OUT, 'workflow-fires.cpuprofile'), JSON.stringify(profile));
      result.profile = {
        busyMs: busyMs(profile),
        self: topSelf(profile, 15),
        inclusive: topInclusive(profile, 15),
      };
    }
    const { rows, profile: _profile, claimMs, runningMs, startMs, ...figures } = result;
    const spread = (xs: number[]) => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), max: Math.max(...xs) });
    const summary = {
      section: 'workflow-fires-summary',
      ...figures,
      claim: spread(claimMs),
      running: spread(runningMs),
      start: spread(startMs),
    };
    return { markdown: renderWorkflowFires(result), rows: [summary, ...rows], result };
  } finally {
    await app?.close();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates the workflows; returns their ids, in order. */
async function seedWorkflows(app: WorkflowSteward, count: number): Promise<string[]> {
  const pins = (plan: ReturnType<typeof planSchema.parse>) => newPins(plan, app.host.listTools(), new Map());
  const ids = Array.from({ length: count }, (_, i) => `wfb_${label(i)}`);
  await eachAtMost(SEED_AT_ONCE, count, async (i) => {
    const plan = planSchema.parse({
      summary: `Look up ${label(i)}`,
      needsTools: true,
      steps: [{ id: 'look', tool: 'audit.lookup', args: { answer: label(i), at: { $ref: 'fire.time' } } }],
    });
    const first = { plan, pins: pins(plan), risk: 'low' as const, note: 'seeded by the bench', sourceRunId: null };
    const created = await app.workflows.createWorkflow(
      {
        id: ids[i] as string,
        name: label(i),
        owner: OWNER,
        conversation: { channel: 'console', key: label(i) },
        review: 'saved',
        first: { ...first, createdBy: OWNER },
      },
      new Date(),
    );
    if (!created) throw new Error(`workflow ${label(i)} was not created`);
  });
  return ids;
}

/** One daily schedule per workflow, next due at `at` (cron `M H * * *` in UTC). */
async function seedSchedules(app: WorkflowSteward, ids: readonly string[], at: Date): Promise<void> {
  const cron = `${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
  await eachAtMost(SEED_AT_ONCE, ids.length, async (i) => {
    const id = `sch_${ids[i]}`;
    const schedule = { id, workflowId: ids[i] as string, cron, timeZone: 'UTC', nextFireAt: at, createdBy: OWNER };
    await app.workflows.addSchedule({ ...schedule, catchUp: 'once', overlap: 'skip' }, new Date(), NO_SCHEDULE_CAPS);
  });
}

/** The figures, from the database (fires, step starts), the audit server's log and the fake LLM's counts. */
async function measure(
  app: WorkflowSteward,
  o: {
    ids: string[];
    at: Date;
    auditLog: string;
    count: number;
    eld: ReturnType<typeof monitorEventLoopDelay>;
    planned: Record<string, number>;
    cpu: CpuWindow;
  },
): Promise<WorkflowFiresResult> {
  const T = o.at.getTime();
  const { rows: fires } = await sql<{
    workflow_id: string;
    outcome: string;
    scheduled_at: Date;
    started_at: Date;
    run_id: string | null;
    step_at: Date | null;
  }>`
    SELECT f.workflow_id, f.outcome, f.scheduled_at, f.started_at, f.run_id,
      (SELECT min(a.started_at) FROM step_attempts a WHERE a.run_id = f.run_id) AS step_at
    FROM workflow_fires f`.execute(app.db.db);
  const firesAtT = fires.filter((f) => f.scheduled_at.getTime() === T);
  const perWorkflow = countBy(firesAtT.map((f) => f.workflow_id));
  const calls = readFileSync(o.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; name: string; args?: { answer?: string; at?: string } })
    .filter((e) => e.type === 'call' && e.name === 'lookup');
  const onTime = calls.filter((c) => Date.parse(c.args?.at ?? '') === T);
  const perAnswer = countBy(onTime.map((c) => c.args?.answer ?? ''));
  const labels = o.ids.map((_, i) => label(i));
  const runOf = new Map(firesAtT.map((f) => [f.workflow_id, f.run_id]));
  const rows = o.ids.map((id, i) => {
    const f = firesAtT.find((x) => x.workflow_id === id);
    const runId = runOf.get(id) ?? '';
    return {
      section: 'workflow-fires',
      workflow: label(i),
      fires: perWorkflow.get(id) ?? 0,
      outcome: f?.outcome ?? null,
      claimMs: f ? f.started_at.getTime() - T : null,
      runningMs: (app.times.runningAt.get(runId) ?? NaN) - T,
      startMs: f?.step_at ? f.step_at.getTime() - T : null,
      completedMs: (app.times.completedAt.get(runId) ?? NaN) - T,
      reportedMs: (app.times.reportedAt.get(runId) ?? NaN) - T,
      auditCalls: perAnswer.get(label(i)) ?? 0,
    };
  });
  const ms = (ns: number) => ns / 1e6;
  return {
    count: o.count,
    scheduledAt: o.at.toISOString(),
    fireRows: fires.length,
    firesAtT: firesAtT.length,
    started: firesAtT.filter((f) => f.outcome === 'started').length,
    duplicateFires: [...perWorkflow.values()].reduce((a, n) => a + Math.max(0, n - 1), 0),
    missedFires: o.ids.filter((id) => !perWorkflow.has(id)).length,
    auditCalls: calls.length,
    duplicateCalls: [...perAnswer.values()].reduce((a, n) => a + Math.max(0, n - 1), 0),
    missedCalls: labels.filter((l) => !perAnswer.has(l)).length,
    offTimeCalls: calls.length - onTime.length,
    claimMs: rows.flatMap((r) => (r.claimMs === null ? [] : [r.claimMs])),
    runningMs: rows.map((r) => r.runningMs),
    startMs: rows.flatMap((r) => (r.startMs === null ? [] : [r.startMs])),
    eld: { p50: ms(o.eld.percentile(50)), p99: ms(o.eld.percentile(99)), max: ms(o.eld.max) },
    completedMs: Math.max(...rows.map((r) => r.completedMs)),
    reportedMs: Math.max(...rows.map((r) => r.reportedMs)),
    llm: o.planned,
    cpu: o.cpu,
    poolMax: app.poolMax,
    sent: app.sent.count,
    statements: [...app.statements.byKind].map(([kind, k]) => ({ kind, ...k })).sort((a, b) => b.count - a.count),
    logs: app.logs,
    sectionS: NaN,
    rows,
  };
}

function countBy(keys: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of keys) out.set(k, (out.get(k) ?? 0) + 1);
  return out;
}

async function eachAtMost(limit: number, n: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const section = await benchWorkflowFires();
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'workflow-fires.jsonl'), section.rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  process.stdout.write(`${section.markdown.join('\n')}\n`);
}

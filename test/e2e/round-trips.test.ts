/**
 * What one run costs the database: a read-only 3-step plan (planner call, three tool calls on server-everything,
 * the synthesizer), started at once, counted statement by statement on the pool the store talks through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import type { Notifier } from '../../src/engine/ports.ts';
import type { Steward } from '../../src/engine/flows/steward.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { everythingStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';
import { recordStatements, type StatementLog } from '../helpers/statement-log.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createSteward, planReply } from './harness.ts';

/**
 * What such a run may cost: 41 statements before issue 13 (BEGIN and COMMIT included), 18 once bookkeeping was folded,
 * 20 since early start reads the run and the requester's review preference before planning, 21 since a first plan
 * reads the conversation's earlier turns (issue 16: one statement, whatever their number), 22 since the plan card
 * carries an estimate (issue 17): recent history is one statement, read at most once per 30 s per process, so a
 * process's first card pays it (as here) and the cards that follow within 30 s do not. (A run whose steps start
 * while the plan streams adds their pins and the record that they started.)
 *
 * Issue 31 brought it to 12, its target: the review preference is read with the run, not twice on its own; a run
 * started here takes its queued decisions only when one was left for its starting driver; the synthesizer's call is
 * settled by the statement that stores its report, and the planner's by the one that saves its plan; the run's end
 * goes with its last steps' ends; the message's run is created by the write that looks for an active run, which
 * also reads the earlier turns and returns the run as stored (so early start reads nothing more); the plan's revision
 * returns the run as it left it, so the plan is offered without reading it again. What is left: the message's write;
 * the planner's reservation; the estimate history; the plan's revision (with the planner's settlement); the move to
 * running; four step waves (a step's intent before its call, each end as it comes, the run's end with the last); the
 * synthesizer's reservation; its report (with its settlement); the report sent.
 */
const MAX_STATEMENTS = 12;

// The model does not stream here, so the plan is read whole and the run takes the path every reviewed plan takes.
const plan = planReply([
  { id: 'sum', tool: 'everything.echo', args: { message: 'five' } },
  {
    id: 'say',
    tool: 'everything.echo',
    args: { message: { $ref: 'steps.sum.output.content[0].text' } },
    dependsOn: ['sum'],
  },
  { id: 'again', tool: 'everything.echo', args: { message: 'done' }, dependsOn: ['sum'] },
]);

let db: TestDatabase;
let log: StatementLog;
let llm: FakeLlm;
let host: McpHost;
let steward: Steward;
const sent: OutboundMessage[] = [];
const logs: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  log = recordStatements(db.name);
  llm = await startFakeLlm(byRole({ planner: plan, synthesizer: 'five, said twice.' }));
  ({ host } = await McpHost.connect(mcpConfig(everythingStdioConfig())));
  const notifier: Notifier = { send: async (_c, m) => void sent.push(m) };
  steward = createSteward({
    llm,
    tools: host,
    store: new PgRunStore(log.db),
    // As the app wires it: the plan card's estimate reads recent history.
    estimateHistory: new PgEstimateHistory(log.db),
    notifier,
    log: (level, m) => logs.push(`${level} ${m}`),
    modelStreams: false,
  });
});

afterAll(async () => {
  await steward?.shutdown();
  await host?.close();
  await log?.close();
  await db?.close();
  await llm?.close();
});

describe('round trips of one run on PostgreSQL', () => {
  it(`a read-only 3-step run, started at once, sends at most ${MAX_STATEMENTS} statements`, async () => {
    // Warm the pool's first connection, so only the run's own statements are counted.
    await sql`select 1`.execute(log.db);
    log.statements.length = 0;

    await steward.message({
      conversation: { channel: 'console', key: 'c1' },
      actor: { id: 'ada', channel: 'console' },
      text: 'Say five, then say it again.',
    });
    await waitUntil('the report', () => sent.find((m) => m.kind === 'report'), {
      details: () => JSON.stringify({ sent, logs, failures: llm.failures }),
    });
    await steward.idle();

    const statements = [...log.statements];
    const report = sent.find((m) => m.kind === 'report');
    expect(report).toMatchObject({ status: 'completed', text: 'five, said twice.' });
    const listing = statements.map((s, i) => `${i + 1}. ${s.slice(0, 160)}`).join('\n');
    expect(statements.length, `statements sent for one run:\n${listing}`).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it("a step's end and its dependents' starts are committed together", async () => {
    const { rows } = await sql<{ type: string; step: string; tx: string }>`
      select type, payload->>'stepId' as step, xmin::text as tx from run_events
      where type in ('stepStarted', 'stepEnded') order by id`.execute(db.db);
    const tx = (type: string, step: string) => rows.find((r) => r.type === type && r.step === step)?.tx;
    expect(tx('stepEnded', 'sum')).toBeDefined();
    expect(tx('stepStarted', 'say')).toBe(tx('stepEnded', 'sum'));
    expect(tx('stepStarted', 'again')).toBe(tx('stepEnded', 'sum'));
  });

  it("the last step's end and the run's end are committed together, the run's end recorded after it", async () => {
    const report = sent.find((m) => m.kind === 'report');
    const runId = report && 'runId' in report ? report.runId : '';
    const { rows } = await sql<{ type: string; tx: string }>`
      select type, xmin::text as tx from run_events
      where run_id = ${runId} and type in ('stepEnded', 'dispatchFinished') order by id`.execute(db.db);
    expect(rows.map((r) => r.type)).toEqual(['stepEnded', 'stepEnded', 'stepEnded', 'dispatchFinished']);
    expect(rows[3]?.tx).toBe(rows[2]?.tx);
  });

  it('a second run right after the first reads no history: its card reuses the estimate history read for the first', async () => {
    const from = log.statements.length;
    const reports = () => sent.filter((m) => m.kind === 'report').length;
    await steward.message({
      conversation: { channel: 'console', key: 'c2' },
      actor: { id: 'ada', channel: 'console' },
      text: 'Say five again.',
    });
    await waitUntil('the second report', () => reports() === 2, { details: () => JSON.stringify({ sent, logs }) });
    await steward.idle();
    const second = log.statements.slice(from);
    expect(second.some((s) => s.includes('percentile_cont'))).toBe(false);
    expect(log.statements.filter((s) => s.includes('percentile_cont'))).toHaveLength(1);
  });
});

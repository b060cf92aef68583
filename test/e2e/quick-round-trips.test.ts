/**
 * What a quick answer costs the database: the front desk calls eight read-only tools at once (server-everything's
 * echo, declared read-only and closed-world as an operator would in mcp.json), then answers; the planner is asked only
 * if it hands over (`after`), so only the front desk's statements are counted, on the pool the store talks through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { OutboundMessage } from '../../src/engine/messages.ts';
import type { Notifier, ToolRunner } from '../../src/engine/ports.ts';
import type { Steward } from '../../src/engine/flows/steward.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { byRole, startFakeLlm, type FakeLlm } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { everythingStdioConfig, mcpConfig } from '../helpers/mcp-servers.ts';
import { recordStatements, type StatementLog } from '../helpers/statement-log.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createSteward } from './harness.ts';

/**
 * What such a request may cost: 19 statements when each call's end was written on its own (issue 31); 12 once a
 * round's ends are one statement, written beside the next model call; 9 since the requester's review preference is
 * the one read with the run, a new run's earlier rounds are not read (it has none: its revision is 0), and the answer
 * is stored by the move that completes the run. What is left: the message's write; the route; per turn the butler's
 * reservation and settlement; the round with its calls' starts; the round's ends; the move to completed with the
 * answer. (The route goes beside the first reservation, a settlement beside the round's write, the ends beside
 * the next turn: fewer of them wait on each other.)
 */
const MAX_STATEMENTS = 9;
const FAN_OUT = 8;

let db: TestDatabase;
let log: StatementLog;
let llm: FakeLlm;
let host: McpHost;
let steward: Steward;
const sent: OutboundMessage[] = [];
const logs: string[] = [];

const echo = (i: number) => ({ id: `call_${i}`, name: 'everything__echo', args: { message: `part ${i}` } });

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  log = recordStatements(db.name);
  const calls = Array.from({ length: FAN_OUT }, (_, i) => echo(i + 1));
  llm = await startFakeLlm(byRole({ butler: [{ text: '', toolCalls: calls }, 'All eight parts echoed.'] }));
  ({ host } = await McpHost.connect(mcpConfig(everythingStdioConfig())));
  // The operator's word in mcp.json ("readOnly": true, "openWorld": false): server-everything does not say.
  const tools: ToolRunner = {
    listTools: () =>
      host
        .listTools()
        .map((t) => ({ ...t, annotations: { ...t.annotations, readOnlyHint: true, openWorldHint: false } })),
    callTool: (name, args, options) => host.callTool(name, args, options),
  };
  const notifier: Notifier = { send: async (_c, m) => void sent.push(m) };
  steward = createSteward({
    llm,
    tools,
    store: new PgRunStore(log.db),
    notifier,
    log: (level, m) => logs.push(`${level} ${m}`),
    settings: { quickAnswers: { maxTurns: 4, maxTokens: 12_000, frontDesk: 'after' } },
  });
});

afterAll(async () => {
  await steward?.shutdown();
  await host?.close();
  await log?.close();
  await db?.close();
  await llm?.close();
});

describe('round trips of one quick answer on PostgreSQL', () => {
  it(`a round of ${FAN_OUT} calls, then the answer, sends at most ${MAX_STATEMENTS} statements`, async () => {
    await sql`select 1`.execute(log.db);
    log.statements.length = 0;

    await steward.message({
      conversation: { channel: 'console', key: 'q1' },
      actor: { id: 'ada', channel: 'console' },
      text: 'Echo the eight parts',
    });
    await waitUntil('the answer', () => sent.find((m) => m.kind === 'answer'), {
      details: () => JSON.stringify({ sent, logs, failures: llm.failures }),
    });
    await steward.idle();

    const statements = [...log.statements];
    expect(sent.find((m) => m.kind === 'answer')).toMatchObject({ text: 'All eight parts echoed.' });
    const run = await db.db.selectFrom('runs').select(['status', 'route', 'report']).executeTakeFirstOrThrow();
    expect(run).toEqual({ status: 'completed', route: 'quick', report: 'All eight parts echoed.' });
    const listing = statements.map((s, i) => `${i + 1}. ${s.slice(0, 160)}`).join('\n');
    expect(statements.length, `statements sent for one quick answer:\n${listing}`).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it("every call's start and end is on record, the ends in one statement, and nothing is left running", async () => {
    const { rows } = await sql<{ step: string; status: string; tx: string }>`
      select e.payload->>'stepId' as step, a.status, e.xmin::text as tx from run_events e
      join step_attempts a on a.run_id = e.run_id and a.step_id = e.payload->>'stepId'
      where e.type = 'stepEnded' order by e.id`.execute(db.db);
    expect(rows.map((r) => r.step).sort()).toEqual(Array.from({ length: FAN_OUT }, (_, i) => `quick:${i + 1}`).sort());
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    expect(new Set(rows.map((r) => r.tx)).size).toBe(1);
  });
});

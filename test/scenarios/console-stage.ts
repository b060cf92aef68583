/**
 * The console as the scenario matrix drives it: the e2e harness's parts (the real engine on PostgreSQL, the audit
 * MCP server, the fake LLM through the openai SDK) with the documented defaults (quick answers on), and a `restart` that
 * stops this Steward and its terminal and starts the next on the same database, as a person restarting it would.
 */
import { PassThrough } from 'node:stream';
import { ConsoleChannel } from '../../src/bot/console-channel.ts';
import type { Steward, StewardSettings } from '../../src/engine/flows/steward.ts';
import { McpHost } from '../../src/mcp/mcp-host.ts';
import { CronerCalendar } from '../../src/cron/croner-calendar.ts';
import { PgAssistantStore } from '../../src/store/pg-assistant-store.ts';
import { PgDelegationStore } from '../../src/store/pg-delegation-store.ts';
import { PgEstimateHistory } from '../../src/store/estimate-history.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { PgWorkflowStore } from '../../src/store/pg-workflow-store.ts';
import { startFakeLlm, type FakeLlm, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { mcpConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import {
  CANARY_KEY,
  checkInvariants,
  createSteward,
  recordingTools,
  startSharedAuditServer,
  type AuditServer,
  type RecordedCall,
} from '../e2e/harness.ts';
import { seedCostlyStep, SPEND_HELD_SETTINGS } from './spend-held.ts';

/** Quick answers as the documented defaults (docs/configuration.md) turn them on. */
export const README_DEFAULTS: Partial<StewardSettings> = { quickAnswers: { maxTurns: 4, maxTokens: 12_000 } };

/** The person at the console is an approver, so they may set up the Assistant a cell asks. */
const SETTINGS: Partial<StewardSettings> = { ...README_DEFAULTS, approvers: ['console:ada'] };

/** One console scenario's world. */
export interface ConsoleStage {
  llm: FakeLlm;
  db: TestDatabase;
  store: PgRunStore;
  audit: AuditServer;
  steward: Steward;
  /** Types a line and waits until the console handled it (not for the models it asked). */
  type(line: string): Promise<void>;
  output(): string;
  /** Waits until the console printed text matching `pattern` after `from` characters; returns the match. */
  waitFor(pattern: RegExp, from?: number, timeoutMs?: number): Promise<string>;
  /** Steward stops (as at a deploy) and the next one starts on the same database, with a new terminal. */
  restart(): Promise<void>;
  /** With `secondProcess`: another Steward on the same database, with its own store owner, tools and terminal. */
  other?: { calls: readonly RecordedCall[]; output: () => string };
  close(): Promise<void>;
}

/**
 * Starts a console stage; `close` stops every part and fails on an MCP call outside an approved plan. With
 * `spendCapHeld` the workspace has a spend cap every plan's estimate passes (spend-held.ts), cards carry estimates,
 * and the approver is Boss, not the person at the terminal.
 */
export async function startConsoleStage(
  script: FakeLlmScript,
  o: { secondProcess?: boolean; spendCapHeld?: boolean } = {},
): Promise<ConsoleStage> {
  const llm = await startFakeLlm(script);
  const audit = await startSharedAuditServer();
  const db = await createTestDatabase('postgres');
  if (o.spendCapHeld) await seedCostlyStep(db);
  const settings: Partial<StewardSettings> = o.spendCapHeld
    ? { ...README_DEFAULTS, ...SPEND_HELD_SETTINGS, approvers: ['console:boss'] }
    : SETTINGS;
  const { host, failures } = await McpHost.connect(mcpConfig(audit.config()));
  if (failures.length > 0) throw new Error(`MCP servers failed: ${JSON.stringify(failures)}`);
  const calls: RecordedCall[] = [];
  const store = new PgRunStore(db.db);
  const logs: string[] = [];
  let printed = '';
  const open = async (to = (text: string) => void (printed += text), recorded = calls, runs = store) => {
    const input = new PassThrough();
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) => to(chunk.toString('utf8')));
    const channel = new ConsoleChannel({ input, output: out, user: 'ada' });
    const steward = createSteward({
      llm,
      tools: recordingTools(host, recorded),
      store: runs,
      notifier: channel,
      log: (level, message) => logs.push(`${level} ${message}`),
      settings,
      signals: db.signals,
      workflows: new PgWorkflowStore(db.db, { owner: store.owner }),
      calendar: new CronerCalendar(),
      assistants: new PgAssistantStore(db.db),
      delegations: new PgDelegationStore(db.db),
      ...(o.spendCapHeld && { estimateHistory: new PgEstimateHistory(db.db) }),
    });
    await channel.start(steward);
    return { input, channel, steward };
  };
  let now = await open();
  // The second process starts as the app does (recovering what needs an owner), and then is only there.
  const otherCalls: RecordedCall[] = [];
  let otherPrinted = '';
  const other = o.secondProcess
    ? await open((t) => void (otherPrinted += t), otherCalls, new PgRunStore(db.db))
    : undefined;
  await other?.steward.recover();
  const stage: ConsoleStage = {
    llm,
    db,
    store,
    audit,
    steward: now.steward,
    other: other && { calls: otherCalls, output: () => otherPrinted },
    async type(line) {
      now.input.write(`${line}\n`);
      await new Promise((r) => setImmediate(r));
      await now.channel.settled();
    },
    output: () => printed,
    async waitFor(pattern, from = 0, timeoutMs = 15_000) {
      const found = await waitUntil(String(pattern), () => pattern.exec(printed.slice(from)), {
        timeoutMs,
        details: () => `console so far:\n${printed}\nlogs:\n${logs.join('\n')}`,
      });
      return found[0];
    },
    async restart() {
      await now.steward.shutdown();
      await now.channel.stop();
      now = await open();
      stage.steward = now.steward;
      await now.steward.recover();
    },
    async close() {
      await Promise.race([now.steward.idle(), new Promise((r) => setTimeout(r, 2000))]);
      const problems = await checkInvariants({
        store,
        db,
        calls: [...calls, ...otherCalls],
        llm,
        shown: [printed, otherPrinted, ...logs],
        canaries: [CANARY_KEY],
        tools: host.listTools(),
      });
      await now.steward.shutdown();
      await now.channel.stop();
      await other?.steward.shutdown();
      await other?.channel.stop();
      await host.close();
      await db.close();
      await llm.close();
      audit.remove();
      if (problems.length > 0) throw new Error(`MCP calls outside an approved plan:\n${problems.join('\n')}`);
    },
  };
  return stage;
}

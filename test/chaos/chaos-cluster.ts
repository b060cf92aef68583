/**
 * Everything the chaos test runs against, for the CLI, a short vitest version and a multi-process bench alike: a
 * private PostgreSQL cluster (restartable) with one database, the fake Slack and fake LLM, the chaos audit server's
 * log, and N Steward processes (the real entry point, Slack HTTP mode) on that one database.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startFakeLlm, type FakeLlm, type FakeLlmScript } from '../fakes/fake-llm-server.ts';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack-server.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { fixtureServer } from '../helpers/entry-point.ts';
import { createSlackDelivery, type SlackDelivery } from '../helpers/slack-delivery.ts';
import { createStewardProcess, type StewardProcess } from '../helpers/steward-process.ts';
import { CHAOS_SERVER, chaosLlmScript } from './chaos-plans.ts';

/** The chaos audit fixture (test/fixtures/chaos-audit-server.mjs). */
export const CHAOS_AUDIT_SCRIPT = fixtureServer('chaos-audit-server');

/** One line of the audit log: a call received, ended or cancelled, by the server of process `caller`. */
export interface AuditLine {
  at: number;
  caller: string;
  pid: number;
  type: 'call' | 'ended' | 'cancelled';
  id: string | number;
  name: string;
  args: { tag?: string; ms?: number };
}

export interface ChaosCluster {
  postgres: PrivatePostgres;
  /** DATABASE_URL of the one database every process shares. */
  databaseUrl: string;
  /** A pool on that database for the test's own reads (errors from a restart are swallowed; retry the query). */
  pool: pg.Pool;
  slack: FakeSlack;
  llm: FakeLlm;
  delivery: SlackDelivery;
  processes: StewardProcess[];
  /** The audit log so far, oldest first. */
  audit(): AuditLine[];
  /** The processes alive and listening for Slack now. */
  live(): StewardProcess[];
  close(): Promise<void>;
}

export interface ChaosClusterOptions {
  processes: number;
  /** The checkout whose `src/main.ts` the processes run (default: this one). */
  root?: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  plannerDelayMs?: number;
  /** The fake LLM's script (default: the chaos plans, `chaosLlmScript`). */
  llmScript?: FakeLlmScript;
}

export const SIGNING_SECRET = 'chaos-signing-secret-0123456789';

/** Starts PostgreSQL, the fakes and the process handles; the processes themselves are not started. */
export async function startChaosCluster(o: ChaosClusterOptions): Promise<ChaosCluster> {
  const postgres = await startPrivatePostgres();
  const parts: Array<() => Promise<void> | void> = [() => postgres.close()];
  const close = async () => {
    for (const fn of parts.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  };
  try {
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query('CREATE DATABASE steward_chaos');
    await admin.end();
    const url = new URL(postgres.url);
    url.pathname = '/steward_chaos';
    const databaseUrl = url.toString();
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, connectionTimeoutMillis: 5_000 });
    // A PostgreSQL restart kills idle connections; the pool reports it here and the next query reconnects.
    pool.on('error', () => undefined);
    parts.push(() => pool.end());
    const slack = await startFakeSlack();
    parts.push(() => slack.close());
    const llm = await startFakeLlm(o.llmScript ?? chaosLlmScript({ plannerDelayMs: o.plannerDelayMs }));
    parts.push(() => llm.close());
    const auditDir = mkdtempSync(join(tmpdir(), 'steward-chaos-audit-'));
    parts.push(() => rmSync(auditDir, { recursive: true, force: true }));
    const auditFile = join(auditDir, 'audit.jsonl');
    const processes = Array.from({ length: o.processes }, (_, i) => {
      const name = `p${i + 1}`;
      return createStewardProcess({
        name,
        databaseUrl,
        llmBaseUrl: llm.baseURL,
        slack: { apiUrl: slack.apiUrl, botToken: slack.botToken, signingSecret: SIGNING_SECRET },
        mcpServers: {
          [CHAOS_SERVER]: {
            command: process.execPath,
            args: [CHAOS_AUDIT_SCRIPT],
            env: { AUDIT_LOG: auditFile, AUDIT_CALLER: name },
          },
        },
        root: o.root,
        env: o.env,
      });
    });
    for (const p of processes) parts.push(() => p.close());
    return {
      postgres,
      databaseUrl,
      pool,
      slack,
      llm,
      delivery: createSlackDelivery({ slack, signingSecret: SIGNING_SECRET }),
      processes,
      audit: () => readAudit(auditFile),
      live: () => processes.filter((p) => p.ready()),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function readAudit(file: string): AuditLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as AuditLine];
      } catch {
        return []; // a line still being written
      }
    });
}

/**
 * The environment a bench run measured: machine, Node, package versions, PostgreSQL and its durability settings
 * (they set the cost of every commit), and the git commit with whether the tree had uncommitted changes.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { testDatabaseUrl } from '../test/helpers/databases.ts';

/** What the report prints about the machine and software. */
export interface Environment {
  cores: number;
  cpu: string;
  memoryGiB: number;
  os: string;
  node: string;
  packages: Record<string, string>;
  postgres: string;
  postgresSettings: Record<string, string>;
  commit: string;
  /** 1-minute load average when the bench started and ended: other work on the machine shows here. */
  load: { start: number; end?: number };
}

const ROOT = join(import.meta.dirname, '..');
const PACKAGES = [
  'openai',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/server-everything',
  '@modelcontextprotocol/server-filesystem',
  'kysely',
  'pg',
  'zod',
  'tsx',
  'typescript',
];

function version(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '?';
  }
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'migrations'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head} + uncommitted changes in src/ or migrations/` : head;
  } catch {
    return '?';
  }
}

async function postgresFacts(): Promise<{ version: string; settings: Record<string, string> }> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    const v = await client.query<{ server_version: string }>('SHOW server_version');
    const settings: Record<string, string> = {};
    for (const name of ['synchronous_commit', 'fsync', 'wal_sync_method', 'shared_buffers']) {
      settings[name] = (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name] ?? '?';
    }
    return { version: v.rows[0]?.server_version ?? '?', settings };
  } finally {
    await client.end();
  }
}

/** Reads the environment. */
export async function readEnvironment(): Promise<Environment> {
  const pgFacts = await postgresFacts();
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? '?',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    packages: Object.fromEntries(PACKAGES.map((p) => [p, version(p)])),
    postgres: pgFacts.version,
    postgresSettings: pgFacts.settings,
    commit: gitCommit(),
    load: { start: loadavg()[0] ?? NaN },
  };
}

/** The environment as Markdown lines. */
export function environmentLines(env: Environment): string[] {
  return [
    `- Machine: ${env.cores} cores (${env.cpu}), ${env.memoryGiB} GiB, ${env.os}; Node ${env.node}.`,
    `- Packages: ${Object.entries(env.packages)
      .map(([p, v]) => `${p} ${v}`)
      .join(', ')}.`,
    `- PostgreSQL ${env.postgres} on 127.0.0.1 (${Object.entries(env.postgresSettings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}).`,
    `- Steward at ${env.commit}. Load average (1 min) ${env.load.start.toFixed(2)} at the start, ${env.load.end?.toFixed(2) ?? '?'} at the end${(env.load.end ?? 0) > 1 || env.load.start > 1 ? ': other work shared the 2 cores, so absolute times are noisy; the interleaved, paired ratios are less affected' : ''}.`,
  ];
}

/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned below) run against Steward's client and
 * against the bare SDK client: every client scenario the suite lists against Steward, and the bare SDK on each one
 * Steward fails (the only place its result decides anything). Fails on any
 * scenario the bare SDK passes and Steward does not (unless Steward refuses it on purpose, listed with the reason),
 * on any Steward failure not listed with its reason, and on a listed one that passes now (no stale list). The suite's runner needs
 * Node 22: this file finds it (the running Node, STEWARD_NODE22, or the folder .ci/run installs it into) and the
 * runner (STEWARD_CONFORMANCE_RUNNER, node_modules, or the folder .ci/run installs it into), and skips with the
 * reason when either is missing (fails under .ci/run, see needs.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { programArgs } from '../helpers/entry-point.ts';
import { describeNeeding } from '../helpers/needs.ts';

const run = promisify(execFile);
const SUITE_VERSION = '0.1.16';
const HERE = dirname(fileURLToPath(import.meta.url));

/** Scenarios Steward fails on purpose, even where the bare SDK passes, each with why. */
const REFUSED_ON_PURPOSE: Record<string, string> = {};

/** Scenarios Steward does not pass yet, each with why; allowed only while the bare SDK fails them too. */
const NOT_YET: Record<string, string> = {
  'auth/cross-app-access-complete-flow':
    'enterprise cross-app access (an ID-JAG from the company IdP, an extension) has no SDK helper; not in this slice',
};

/** How many scenario runs at once: the suite checks timings (sse-retry's retry field) that a loaded machine misses. */
const AT_ONCE = 2;

function findRunner(): string | undefined {
  const fromEnv = process.env.STEWARD_CONFORMANCE_RUNNER;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  try {
    const pkg = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json');
    return join(dirname(pkg), 'dist', 'index.js');
  } catch {
    // Where .ci/run installs it, outside the product's node_modules.
    const cached = join(
      cacheDir(),
      'steward-ci/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js',
    );
    return existsSync(cached) ? cached : undefined;
  }
}

function cacheDir(): string {
  return process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
}

function findNode22(): string | undefined {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const candidates = [process.env.STEWARD_NODE22, join(cacheDir(), 'steward-ci/node22/node_modules/node/bin/node')];
  return candidates.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
}

const runner = findRunner();
const node22 = findNode22();
const missing =
  runner === undefined
    ? `the conformance suite is not installed (.ci/run installs @modelcontextprotocol/conformance@${SUITE_VERSION} under ~/.cache/steward-ci/conformance; or set STEWARD_CONFORMANCE_RUNNER to its dist/index.js)`
    : node22 === undefined
      ? 'no Node 22 for its runner (set STEWARD_NODE22, or run .ci/run once to install it)'
      : undefined;

interface ScenarioResult {
  passed: boolean;
  failures: string[];
}

describeNeeding(missing, `MCP conformance suite ${SUITE_VERSION}: client scenarios`, () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'steward-conformance-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  /**
   * One scenario against one adapter. A Steward failure that would fail this test is run once more, since a few
   * checks measure time (sse-retry's retry field) and a loaded machine can miss them.
   */
  async function runScenario(adapter: string, scenario: string): Promise<ScenarioResult> {
    const attempts =
      adapter === 'steward-client.ts' && !(scenario in REFUSED_ON_PURPOSE) && !(scenario in NOT_YET) ? 2 : 1;
    let result: ScenarioResult = { passed: false, failures: [] };
    for (let attempt = 1; attempt <= attempts && !result.passed; attempt++) {
      const dir = join(out, adapter, scenario.replace(/\//g, '_'), String(attempt));
      const program = programArgs(join(HERE, adapter), adapter.replace(/\.ts$/, '')).map((a) => `"${a}"`);
      const command = `"${process.execPath}" ${program.join(' ')}`;
      const args = [runner!, 'client', '--command', command, '--scenario', scenario, '--timeout', '30000', '-o', dir];
      const passed = await run(node22!, args, { cwd: out, timeout: 60_000 }).then(
        () => true,
        () => false,
      );
      result = { passed, failures: passed ? [] : await failedChecks(dir) };
    }
    return result;
  }

  it('Steward passes every scenario the bare SDK passes, and fails only those listed with a reason', async () => {
    const version = await run(node22!, [runner!, '--version'], { cwd: out });
    expect(version.stdout.trim(), 'the conformance runner found is not the pinned version').toBe(SUITE_VERSION);
    const { stdout } = await run(node22!, [runner!, 'list'], { cwd: out });
    const scenarios = stdout
      .slice(stdout.indexOf('Client scenarios'))
      .split('\n')
      .flatMap((line) => /^\s+- (\S+)/.exec(line)?.[1] ?? []);
    expect(scenarios.length).toBeGreaterThan(20);

    const results = new Map<string, ScenarioResult>();
    const runAll = async (adapter: string, names: readonly string[]) => {
      const queue = [...names];
      await Promise.all(
        Array.from({ length: AT_ONCE }, async () => {
          for (let s = queue.shift(); s; s = queue.shift())
            results.set(`${adapter} ${s}`, await runScenario(adapter, s));
        }),
      );
    };
    // Steward on every scenario; the bare SDK only where Steward fails, the one place its result decides anything
    // (each run is two Node processes, and this file shares two cores with the rest of the suite).
    await runAll('steward-client.ts', scenarios);
    await runAll(
      'sdk-client.ts',
      scenarios.filter((s) => !results.get(`steward-client.ts ${s}`)!.passed),
    );
    const rows = scenarios.map((s) => {
      const steward = results.get(`steward-client.ts ${s}`)!;
      const sdk = results.get(`sdk-client.ts ${s}`)?.passed;
      return { scenario: s, sdk, steward: steward.passed, failures: steward.failures };
    });
    const mark = (p: boolean | undefined) => (p === undefined ? 'n/a ' : p ? 'pass' : 'FAIL');
    console.log(rows.map((r) => `${r.scenario.padEnd(44)} sdk ${mark(r.sdk)}  steward ${mark(r.steward)}`).join('\n'));

    const behindSdk = rows
      .filter((r) => r.sdk === true && !r.steward && !(r.scenario in REFUSED_ON_PURPOSE))
      .map((r) => `${r.scenario}: ${r.failures.join('; ')}`);
    expect(behindSdk, 'scenarios the bare SDK passes and Steward fails').toEqual([]);
    const unexpected = rows
      .filter((r) => !r.steward && !(r.scenario in REFUSED_ON_PURPOSE) && !(r.scenario in NOT_YET))
      .map((r) => `${r.scenario}: ${r.failures.join('; ')}`);
    expect(unexpected, 'Steward failures listed neither in REFUSED_ON_PURPOSE nor in NOT_YET').toEqual([]);
    const listed = (s: string) => s in REFUSED_ON_PURPOSE || s in NOT_YET;
    const stale = rows.filter((r) => r.steward && listed(r.scenario)).map((r) => r.scenario);
    expect(stale, 'listed as failing but passing now: take them off the list').toEqual([]);
  }, 600_000);
});

/** The names and messages of the failed checks a scenario run saved (its output folder holds one checks.json). */
async function failedChecks(dir: string): Promise<string[]> {
  const found = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const file = found.find((f) => f.endsWith('checks.json'));
  if (!file) return ['the runner saved no checks'];
  const checks = JSON.parse(await readFile(join(dir, file), 'utf8')) as {
    name: string;
    status: string;
    errorMessage?: string;
  }[];
  return checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((c) => `${c.name}: ${c.errorMessage ?? c.status}`);
}

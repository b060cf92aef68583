import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.ts';

/**
 * The tests `npm run test:unit` runs: no database, server, network or child process (the engine, chat rendering
 * and text, cron, configuration, the dashboard's pure layout, the source checks). `npm test` runs every file,
 * these included.
 */
const UNIT_TESTS = [
  'test/architecture.test.ts',
  'test/sequencer.test.ts',
  'test/config.test.ts',
  'test/config-docs.test.ts',
  'test/docs-links.test.ts',
  'test/config-errors.test.ts',
  'test/startup-summary.test.ts',
  'test/examples.test.ts',
  'test/engine/**/*.test.ts',
  'test/bot/**/*.test.ts',
  'test/bench/*.test.ts',
  'test/cron/*.test.ts',
  'test/web/graph-layout.test.ts',
  'test/web/timeline-waits.test.ts',
  'test/web/dashboard-config.test.ts',
];
// Under test/bot but talks HTTP to the fake Slack server.
const NOT_UNIT = ['test/bot/slack/slack-thinking.test.ts'];

/**
 * What CI runs again on the second Node.js version (`STEWARD_TESTS=edges`): the unit tests, and every file that
 * exercises what differs between Node versions: its HTTP client and server (fetch/undici under the model SDKs, MCP's
 * HTTP transports, Bolt's receiver), WebSockets (discord.js, Socket Mode), child processes and the tsx loader (the
 * real entry point started, killed and started again; MCP servers over stdio), the pg driver and PGlite's WASM
 * through restarts of a real server, and chromium over the DevTools protocol. The engine's flows above these edges
 * are the same JavaScript on either version and run once, on Node 20.
 */
const EDGE_TESTS = [
  ...UNIT_TESTS,
  'test/llm/**/*.test.ts',
  'test/mcp/**/*.test.ts',
  'test/fakes/**/*.test.ts',
  'test/helpers/**/*.test.ts',
  'test/web/**/*.test.ts',
  'test/bot/slack/slack-thinking.test.ts',
  'test/store/database.test.ts',
  'test/store/migrations.test.ts',
  'test/store/pg-run-store.test.ts',
  'test/store/store-faults.test.ts',
  'test/e2e/app-*.test.ts',
  'test/e2e/restart.test.ts',
  'test/e2e/multi-process.test.ts',
  'test/e2e/health.test.ts',
  'test/e2e/slack-app.test.ts',
  'test/e2e/slack-app-home.test.ts',
  'test/e2e/slack-socket-mode.test.ts',
  'test/e2e/discord-app.test.ts',
  'test/e2e/dashboard-browser.test.ts',
];

const unit = process.env.STEWARD_TESTS === 'unit';
const edges = process.env.STEWARD_TESTS === 'edges';

export default defineConfig({
  test: {
    include: unit ? UNIT_TESTS : edges ? EDGE_TESTS : ['test/**/*.test.ts'],
    exclude: unit ? [...configDefaults.exclude, ...NOT_UNIT] : configDefaults.exclude,
    // A ceiling, not a wait: PGlite starts in WASM and migrates each new database, slower on a loaded machine.
    // Builds the programs tests start as child processes once per run (not for the unit tests, which start none).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // No file mocks a module or stubs a global, and the one that sets environment variables deletes them after, so
    // files share a module graph: the unit files in threads, the rest in forked processes (which the child
    // processes, PGlite's WASM and the servers they start want), each fork taking one file after another. A fresh
    // graph per file cost 0.5-3 s of CPU each: on 2 cores the whole suite used 1,628 s of CPU isolated and 1,224 s
    // shared (import time summed over files 788 s and 70 s), with the same tests passing.
    pool: unit ? 'threads' : 'forks',
    isolate: false,
    // Most files wait on servers, processes and timers more than they compute: one fork more than there are cores
    // keeps the cores busy (vitest's default is one fewer). On 2 cores the suite took 31 min with one fork; 9 min
    // with three, together with PGlite databases copied from a migrated one.
    maxWorkers: unit ? undefined : availableParallelism() + 1,
    // The longest files first (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
  },
});

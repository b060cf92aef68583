import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The tests `npm run test:unit` runs: no database, server, network or child process (the engine, chat rendering
 * and text, cron, configuration, the dashboard's pure layout, the source checks). `npm test` runs every file,
 * these included.
 */
const UNIT_TESTS = [
  'test/architecture.test.ts',
  'test/config.test.ts',
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

const unit = process.env.STEWARD_TESTS === 'unit';

export default defineConfig({
  test: {
    include: unit ? UNIT_TESTS : ['test/**/*.test.ts'],
    exclude: unit ? [...configDefaults.exclude, ...NOT_UNIT] : configDefaults.exclude,
    // A ceiling, not a wait: PGlite starts in WASM and migrates each new database, slower on a loaded machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The unit files share one module cache in threads: they hold no state between files (none mocks a module,
    // stubs a global or changes process.env), and starting a fresh module graph per file was most of their time.
    // Every other file keeps a forked process of its own.
    pool: unit ? 'threads' : 'forks',
    isolate: !unit,
  },
});

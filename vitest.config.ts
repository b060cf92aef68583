import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A ceiling, not a wait: PGlite starts in WASM and migrates each new database, slower on a loaded machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});

/**
 * Once per `vitest run` (not for `npm run test:unit`): builds the programs tests start as child processes, the real
 * entry point `src/main.ts` and the conformance suite's client adapters, into one ES module file each, with esbuild
 * (the compiler the tsx loader itself runs file by file), its packages included. A child started from the bundle runs
 * the same code as `npm start` but loads one file instead of some 200 through tsx's loader hooks and a thousand from
 * node_modules, and the suite starts over a hundred. `test/e2e/entry-point-hostile.test.ts` and restart's bad
 * configuration test still start `src/main.ts` through tsx, as `npm start` does. The fixture MCP servers the tests
 * start most are bundled too, with their packages (`fixtureServer`). Each run builds into a folder of its
 * own under node_modules (so the bundles find their packages there), removed when the run ends.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { dropRunDatabases, TEST_RUN_ENV } from './helpers/databases.ts';
import { BUNDLE_ENV } from './helpers/entry-point.ts';

const ROOT = join(import.meta.dirname, '..');

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.STEWARD_TESTS === 'unit') return undefined;
  const parent = join(ROOT, 'node_modules/.cache/steward');
  await mkdir(parent, { recursive: true });
  const outdir = await mkdtemp(join(parent, 'bundles-'));
  const common: BuildOptions = {
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.12',
    // Packages are bundled too, all but PGlite (which finds its WASM next to its own files) and the optional native
    // add-ons nothing here installs. Their CommonJS parts call require, which an ES module has through createRequire.
    external: ['@electric-sql/pglite', 'pg-native', 'zlib-sync', 'bufferutil', 'utf-8-validate'],
    banner: {
      js: "import { createRequire as stewardRequire } from 'node:module'; const require = stewardRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
  // Steward's programs, with a source map for their stack traces (without the sources' text, which Node would parse
  // at every start). From start to ready on 2 cores: 2.8 s of CPU with packages loaded from node_modules and a full
  // map, 1.5 s bundled this way.
  await build({
    ...common,
    entryPoints: {
      main: join(ROOT, 'src/main.ts'),
      'steward-client': join(ROOT, 'test/conformance/steward-client.ts'),
      'sdk-client': join(ROOT, 'test/conformance/sdk-client.ts'),
    },
    sourcemap: 'linked',
    sourcesContent: false,
  });
  // The fixture MCP servers the tests start most (every matrix cell and most end-to-end tests start the audit server):
  // about 0.23 s of CPU to start and answer tools/list instead of 0.45 s.
  await build({
    ...common,
    entryPoints: ['audit-server', 'chaos-audit-server'].map((name) => join(ROOT, 'test/fixtures', `${name}.mjs`)),
  });
  // The test processes are forked after this, with this environment.
  process.env[BUNDLE_ENV] = outdir;
  // The run's name: its test databases carry it, so that the emptied ones its processes keep for reuse
  // (test/helpers/databases.ts) are dropped here at the end, and no other run's are.
  const run = randomBytes(4).toString('hex');
  process.env[TEST_RUN_ENV] = run;
  return async () => {
    await rm(outdir, { recursive: true, force: true });
    await dropRunDatabases(run);
  };
}

/**
 * Once per `vitest run` (not for `npm run test:unit`): builds the programs tests start as child processes, the real
 * entry point `src/main.ts` and the conformance suite's client adapters, into one ES module file each, with esbuild
 * (the compiler the tsx loader itself runs file by file). A child started from the bundle runs the same code as
 * `npm start` but loads one file instead of some 200 through tsx's loader hooks: about 2 s of CPU instead of 4.5 s
 * per start, and the suite starts over a hundred. `test/e2e/entry-point-hostile.test.ts` and restart's bad
 * configuration test still start `src/main.ts` through tsx, as `npm start` does. The fixture MCP servers the tests
 * start most are bundled too, with their packages (`fixtureServer`). Each run builds into a folder of its
 * own under node_modules (so the bundles find their packages there), removed when the run ends.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_ENV } from './helpers/entry-point.ts';

const ROOT = join(import.meta.dirname, '..');

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.STEWARD_TESTS === 'unit') return undefined;
  const parent = join(ROOT, 'node_modules/.cache/steward');
  await mkdir(parent, { recursive: true });
  const outdir = await mkdtemp(join(parent, 'bundles-'));
  await build({
    entryPoints: {
      main: join(ROOT, 'src/main.ts'),
      'steward-client': join(ROOT, 'test/conformance/steward-client.ts'),
      'sdk-client': join(ROOT, 'test/conformance/sdk-client.ts'),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20.12',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  // The fixture MCP servers the tests start most (every matrix cell and most end-to-end tests start the audit server),
  // with the SDK inlined: about 0.23 s of CPU to start and answer tools/list instead of 0.45 s.
  await build({
    entryPoints: ['audit-server', 'chaos-audit-server'].map((name) => join(ROOT, 'test/fixtures', `${name}.mjs`)),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.12',
    // The SDK's CommonJS dependencies (ajv) call require, which an ES module has only through createRequire.
    banner: { js: "import { createRequire as stewardRequire } from 'node:module'; const require = stewardRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  // The test processes are forked after this, with this environment.
  process.env[BUNDLE_ENV] = outdir;
  return () => rm(outdir, { recursive: true, force: true });
}

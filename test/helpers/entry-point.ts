/**
 * How a test starts one of Steward's programs as a child process: from the bundle `test/global-setup.ts` built for
 * this run, or through the tsx loader (as `npm start` does) when there is none (a file run outside vitest, such as
 * `npm run chaos`) or when the test is about the start command itself.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The environment variable naming this run's bundle folder. */
export const BUNDLE_ENV = 'STEWARD_TEST_BUNDLE';

const ROOT = join(import.meta.dirname, '../..');
// The tsx loader by absolute URL, since children often run in a temp folder outside the project.
const TSX = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx')).href;

/** The Node arguments that run `source` (a .ts file of this checkout): its bundle named `bundle`, or `source` via tsx. */
export function programArgs(source: string, bundle: string, o: { tsx?: boolean } = {}): string[] {
  const dir = process.env[BUNDLE_ENV];
  if (dir && !o.tsx) return ['--enable-source-maps', join(dir, `${bundle}.mjs`)];
  return ['--import', TSX, source];
}

/**
 * The path of the fixture MCP server `name` (`test/fixtures/<name>.mjs`): this run's bundle of it, with the MCP SDK
 * inlined, when there is one (a third of the CPU to start: the matrix and the end-to-end files start hundreds), else
 * the source file.
 */
export function fixtureServer(name: string): string {
  const dir = process.env[BUNDLE_ENV];
  return dir ? join(dir, `${name}.mjs`) : join(ROOT, 'test/fixtures', `${name}.mjs`);
}

/** The Node arguments that start this checkout's `src/main.ts` (`tsx: true`: through tsx, as `npm start` does). */
export function entryPointArgs(o: { tsx?: boolean } = {}): string[] {
  return programArgs(join(ROOT, 'src/main.ts'), 'main', o);
}

/**
 * The one place a test decides not to run. A suite that needs something of the machine (a private PostgreSQL
 * cluster, chromium, an address other than loopback) passes why it is missing, or undefined when it is there:
 *
 *   describeNeeding(privatePostgresMissing, 'runs across PostgreSQL faults', () => { ... });
 *   itNeeding(outsideMissing, 'listens on loopback only', async () => { ... });
 *
 * With nothing missing the suite runs as a plain `describe` (or `it`). With something missing it is skipped, the
 * reason in its title, as on a developer's machine without initdb; but under STEWARD_REQUIRE_ALL=1, which .ci/run
 * sets, it fails with the reason instead, so CI never passes with a suite left out. test/architecture.test.ts
 * refuses a skip written anywhere but here.
 */
import { describe, it } from 'vitest';

/** Set (to anything but empty or `0`) by .ci/run: a suite that cannot run here fails instead of skipping. */
export const REQUIRE_ALL = 'STEWARD_REQUIRE_ALL';

const requireAll = !['', '0'].includes(process.env[REQUIRE_ALL] ?? '');

/** `describe(title, body)` where `missing` is undefined; otherwise skipped with the reason, or failed under CI. */
export function describeNeeding(missing: string | undefined, title: string, body: () => void): void {
  if (missing === undefined) describe(title, body);
  else if (requireAll) describe(title, () => it('has what it needs', () => cannotRun(title, missing)));
  else describe.skip(`${title} (skipped: ${missing})`, body);
}

/** `it(title, test)` where `missing` is undefined; otherwise skipped with the reason, or failed under CI. */
export function itNeeding(missing: string | undefined, title: string, test: () => Promise<void> | void): void {
  if (missing === undefined) it(title, test);
  else if (requireAll) it(title, () => cannotRun(title, missing));
  else it.skip(`${title} (skipped: ${missing})`, test);
}

function cannotRun(title: string, missing: string): never {
  throw new Error(`"${title}" cannot run here: ${missing} (${REQUIRE_ALL} is set, so this fails instead of skipping)`);
}

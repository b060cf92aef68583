/**
 * The order `npm test` starts files in: the longest first, so the last minutes of a run are not one long file
 * running alone. vitest orders by the durations it cached from the last run on this machine; CI runs on a clean
 * checkout, where it has none and starts the biggest files first, which put the scenario matrix (nine-line files
 * whose cells run for minutes) at the very end. The files that take longest, measured (one run of the whole suite
 * with the per-file durations of vitest's JSON report, 2026-12-06, CI on Node 20), start first in this order; the rest follow in
 * vitest's own order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const LONGEST_FIRST = [
  'test/e2e/chaos.test.ts',
  'test/scenarios/slack-3.test.ts',
  'test/scenarios/slack-2.test.ts',
  'test/e2e/db-faults.test.ts',
  'test/scenarios/slack-1.test.ts',
  'test/e2e/delegation-console.test.ts',
  'test/e2e/multi-process.test.ts',
  'test/scenarios/discord-1.test.ts',
  'test/scenarios/discord-2.test.ts',
  'test/scripts/lint.test.ts',
  'test/e2e/restart.test.ts',
  'test/conformance/conformance.test.ts',
  'test/e2e/slack-rate-limits.test.ts',
  'test/scenarios/console-1.test.ts',
  'test/store/store-faults.test.ts',
  'test/mcp/mcp-host-reconnect.test.ts',
  'test/e2e/workflow-multi-process.test.ts',
  'test/scenarios/console-2.test.ts',
  'test/e2e/slack-steering.test.ts',
  'test/scenarios/console-3.test.ts',
];

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    return sorted
      .map((spec, i) => ({ spec, i, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map(({ spec }) => spec);
  }
}

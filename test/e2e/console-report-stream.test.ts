import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PLAN = planReply([{ id: 'sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } }]);
const CHUNKS = ['The sum ', 'of 2 and 3 ', 'is 5, ', 'as the tool ', 'reported.'];
const REPORT = CHUNKS.join('');
const HEADING = '=== Report (completed) ===\n';

async function storedReport(harness: Harness): Promise<string | null> {
  const run = await onlyRun(harness);
  const row = await harness.db.db.selectFrom('runs').select('report').where('id', '=', run.id).executeTakeFirst();
  return row?.report ?? null;
}

describe('console: the report streams as the model writes it', () => {
  it('shows the first words before the model has finished, and ends with the whole report once', async () => {
    const synthesizer = { text: REPORT, chunks: CHUNKS, chunkDelayMs: 200 };
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [PLAN], synthesizer }),
    });

    await h.type('What is 2 + 3?');
    await h.waitFor(new RegExp(`${HEADING.replace(/[()]/g, '\\$&')}The sum `));
    // The person reads the first words while the model is still writing the rest.
    expect(h.llm.written.length).toBeLessThan(CHUNKS.length);

    await h.waitFor(/reported\.\n\n/);
    await h.steward.idle();
    const out = h.output();
    expect(out).toContain(`\n${HEADING}${REPORT}\n\n`);
    expect(out.split(HEADING)).toHaveLength(2);
    expect(await storedReport(h)).toBe(REPORT);
    expect((await onlyRun(h)).status).toBe('completed');
    expect(h.llm.failures).toEqual([]);

    // From the fake writing the first piece to the console printing it.
    const firstAt = h.llm.written[0]!.at;
    const shownAt = h.printedBy(out.indexOf(HEADING) + HEADING.length + CHUNKS[0]!.length)!;
    // A figure, not a bound: timing targets live in the bench (a test under CI load cannot hold one).
    console.log(`console: first token to first words shown: ${(shownAt - firstAt).toFixed(1)} ms`);
  });

  it('a stream cut midway still ends with one complete report: the plain one, saying why', async () => {
    const synthesizer = { text: REPORT, chunks: CHUNKS, cut: { after: 2, how: 'drop' as const } };
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [PLAN], synthesizer }),
    });

    await h.type('What is 2 + 3?');
    await h.waitFor(
      /The text above is not the final report; here it is\.\n\n=== Report \(completed\) ===\nRun completed\./,
    );
    await h.steward.idle();
    const stored = await storedReport(h);
    expect(stored).toMatch(
      /^Run completed\. \(The report writer failed \(the model failed: model synth-model .* stopped sending before its answer ended/,
    );
    // The words shown first, then the report as stored, whole.
    const out = h.output();
    expect(out).toContain(`${HEADING}The sum of 2 and 3 \n! The text above is not the final report`);
    expect(out).toContain(`${HEADING}${stored}\n`);
  });
});

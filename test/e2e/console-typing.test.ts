/**
 * Typing while Steward works (issue 12): the console answers every line at once, even while the model is still
 * writing (the fake planner below never answers), and never lets a line vanish or turn into something else.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const echo = (message: string) => planReply([{ id: 'say', tool: 'everything.echo', args: { message } }]);
const plannerCalled = (harness: Harness, n = 1) =>
  waitUntil(`${n} planner call(s)`, () => harness.llm.requests.filter((r) => r.role === 'planner').length >= n);

describe('console, typing while Steward works (postgres)', () => {
  it('says it is planning, answers a line typed meanwhile, and quits at once while the model is still writing', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [{ hang: true }] }),
    });
    h.typeNow('list the files in /tmp');
    await h.waitFor(/^… planning \(type "cancel" to drop it\)$/m);
    await plannerCalled(h);
    h.typeNow('how is it going?');
    await h.waitFor(/^i Still planning this request; one moment\.$/m);
    h.typeNow('quit');
    await h.waitFor(/^Bye: Steward stops now and picks these up when it next starts\.$/m);
    const run = await onlyRun(h);
    expect(h.output()).toContain(
      `i Run ${run.id.slice(0, 8)} was being planned; it is planned again when Steward next starts.`,
    );
    // The planner never answered: both answers came while it was still writing, and the run waits for the next start.
    expect(run.status).toBe('planning');
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner']);
  });

  it.each(['cancel', 'stop'])('"%s" while the model writes the plan drops the request at once', async (word) => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [{ hang: true }, echo('hi')], synthesizer: ['Said hi.'] }),
    });
    h.typeNow('list the files in /tmp');
    await h.waitFor(/^… planning/m);
    await plannerCalled(h);
    h.typeNow(word);
    await h.waitFor(/^i Cancelled by ada while it was being planned\. Nothing was run\.$/m);
    expect((await onlyRun(h)).status).toBe('cancelled');
    // The next request is planned and run as usual, and the abandoned call never turned into an error line.
    await h.type('echo hi');
    await h.waitFor(/=== Report \(completed\) ===\nSaid hi\./);
    expect(h.output()).not.toMatch(/could not (plan|make)/);
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'hi' }]);
  });

  it('an unrelated reply, or another request, is acknowledged and never amends the run; "new <request>" starts one', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [echo('a'), echo('b')], classifier: ['unrelated', 'new'], synthesizer: ['Said b.'] }),
    });
    await h.type('review all');
    await h.type('echo a');
    await h.waitFor(/Type "approve"/);
    const first = await onlyRun(h);
    await h.type('what a lovely day');
    await h.waitFor(
      new RegExp(
        `^i That does not look like it is about run ${first.id.slice(0, 8)} \\("echo a"\\), so it was left alone\\. Type "new <request>" to start another request, or "amend <text>" to change this one\\.$`,
        'm',
      ),
    );
    // Regression: a request typed while an older run was active became an amendment of that run.
    const acknowledged = h.output().length;
    await h.type('list the files in /var');
    await h.waitFor(/^i That does not look like it is about run [^\n]*left alone/m, undefined, acknowledged);
    expect((await h.store.getRun(first.id))!.revision).toBe(0);
    await h.type('new echo b');
    expect(h.output().match(/=== Plan \(revision 0/g)).toHaveLength(2);
    const runs = await h.db.db.selectFrom('runs').select(['id', 'request', 'status']).orderBy('created_at').execute();
    expect(runs.map((r) => [r.request, r.status])).toEqual([
      ['echo a', 'awaiting_review'],
      ['echo b', 'awaiting_review'],
    ]);
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner', 'classifier', 'classifier', 'planner']);
    // Commands act on the card shown last: the new run.
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===\nSaid b\./);
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'b' }]);
    h.typeNow('quit');
    await h.waitFor(/^Bye/m);
    expect(h.output()).toContain(
      `i Run ${first.id.slice(0, 8)}: "Do the work" waits for your review; its plan is shown again when Steward next starts.`,
    );
  });

  it('quit while a step runs says the run continues at the next start', async () => {
    const slow = planReply([
      { id: 'slow', tool: 'everything.trigger-long-running-operation', args: { duration: 20, steps: 1 } },
    ]);
    h = await startHarness({ db: 'postgres', servers: [everythingStdioConfig()], script: byRole({ planner: [slow] }) });
    await h.type('run the slow thing');
    await h.waitFor(/▶ slow running/);
    h.typeNow('quit');
    await h.waitFor(/^Bye/m);
    const run = await onlyRun(h);
    expect(h.output()).toContain(
      `i Run ${run.id.slice(0, 8)}: "Do the work" is still running; it continues where it stopped when Steward next starts.`,
    );
  });
});

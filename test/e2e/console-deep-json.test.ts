/**
 * Issue 11, item 5: plan JSON nested 10,000 deep, from the model or from a person, is refused with a rule through
 * the real console path, never "Maximum call stack size exceeded"; and the first hold card of an amendment written
 * after seeing tool outputs shows the values a held step would send, not `{"$ref": ...}`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PLAN_DEPTH, TOO_DEEP } from '../../src/engine/plan/json-depth.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig, filesystemStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const DEEP = 10_000;
/** An argument value `DEEP` arrays deep, as JSON text (JSON.stringify itself would overflow the stack). */
const deepValue = `${'['.repeat(DEEP)}"x"${']'.repeat(DEEP)}`;
const deepStep = `{"id":"deep","tool":"everything.echo","args":{"message":${deepValue}}}`;
/** A planner answer nested `DEEP` levels deep. */
const deepPlan = `{"summary":"Do the work","rationale":"","needsTools":true,"answer":null,"risks":[],"steps":[${deepStep}]}`;

const echo = (id: string, message: string, dependsOn: string[] = []) => ({
  id,
  tool: 'everything.echo',
  args: { message },
  dependsOn,
});
const slow = (id: string, duration: number, dependsOn: string[] = []) => ({
  id,
  tool: 'everything.trigger-long-running-operation',
  args: { duration, steps: 1 },
  dependsOn,
});

describe('plan JSON nested 10,000 deep, through the console (postgres)', () => {
  it('a planner answer nested 10,000 deep is sent back as the depth rule, then refused clearly; nothing runs', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [deepPlan, deepPlan, deepPlan] }),
    });
    await h.type('echo something');
    const shown = await h.waitFor(/✖ I could not make a valid plan: [^\n]*/);
    expect(shown).toBe(`✖ I could not make a valid plan: ${TOO_DEEP}`);
    expect(TOO_DEEP).toContain(`more than ${MAX_PLAN_DEPTH} levels deep`);
    const planner = h.llm.requests.filter((r) => r.role === 'planner');
    expect(planner).toHaveLength(3);
    expect(planner[0]!.system).toContain(`may nest at most ${MAX_PLAN_DEPTH} levels deep`);
    expect(planner[1]!.lastUserText).toContain(`That plan was rejected:\n${TOO_DEEP}`);
    expect(h.output()).not.toContain('Maximum call stack');
    expect(h.logs.join('\n')).not.toContain('Maximum call stack');
    expect(h.calls).toEqual([]);
    expect((await onlyRun(h)).status).toBe('failed');
  });

  it('an amendment answered with a plan nested 10,000 deep is refused with the rule; the run goes on unchanged', async () => {
    const first = planReply([echo('first', 'one'), slow('wait', 1, ['first']), echo('last', 'three', ['wait'])]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [first, deepPlan, deepPlan, deepPlan], classifier: ['amend'], synthesizer: ['done'] }),
    });
    await h.type('three things');
    await h.waitFor(/▶ wait running/);
    await h.type('make it much deeper');
    await h.waitFor(/The amendment could not be applied/);
    expect(h.output()).toContain(
      `The amendment could not be applied (${TOO_DEEP}); the run goes on with the current plan.`,
    );
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(h.output()).not.toContain('Maximum call stack');
    expect(h.calls.map((c) => c.args)).toEqual([{ message: 'one' }, { duration: 1, steps: 1 }, { message: 'three' }]);
    const run = await onlyRun(h);
    expect(run.revision).toBe(0);
    expect((await h.store.listRevisions(run.id)).map((r) => r.reason)).toEqual(['planned']);
  });

  it('an edit nested 10,000 deep is refused with the limit and changes nothing', async () => {
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [planReply([echo('a', 'x')])] }),
    });
    await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());
    await h.type('one echo');
    await h.waitFor(/revision 0, risk LOW/);
    await h.type(`edit {"steps":[${deepStep}]}`);
    await h.waitFor(/That edit was refused/);
    expect(h.output()).toContain(`That edit was refused: a plan nests at most ${MAX_PLAN_DEPTH} levels deep.`);
    expect(h.output()).not.toContain('Maximum call stack');
    const run = await onlyRun(h);
    expect(run.status).toBe('awaiting_review');
    expect(run.revision).toBe(0);
    expect(h.calls).toEqual([]);
  });
});

describe('the hold card of an amendment written after seeing tool outputs (postgres)', () => {
  it('regression: the first hold card showed {"$ref": ...}; it shows the value the held step would send', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-held-'));
    const path = join(dir, 'out.txt');
    const first = planReply([echo('first', 'hello'), slow('wait', 1, ['first'])]);
    const amended = planReply([
      echo('first', 'hello'),
      slow('wait', 1, ['first']),
      {
        id: 'save',
        tool: 'fs.write_file',
        args: { path, content: { $ref: 'steps.first.output.content[0].text' } },
        dependsOn: ['first'],
      },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig(), filesystemStdioConfig(dir)],
      script: byRole({ planner: [first, amended], classifier: ['amend'], synthesizer: ['done'] }),
    });
    await h.type('echo hello, then wait');
    await h.waitFor(/▶ wait running/);
    const from = h.output().length;
    await h.type('also save what the echo said to out.txt');
    const why = await h.waitFor(
      /Step save \(fs\.write_file\) was added or changed by an amendment[^\n]*/,
      15_000,
      from,
    );
    expect(why).toBe(
      'Step save (fs.write_file) was added or changed by an amendment written after seeing tool outputs. ' +
        `It would send: ${JSON.stringify({ path, content: 'Echo: hello' })}`,
    );
    // What the card says about the held step (below its step list) names no reference.
    const held = h.output().slice(h.output().lastIndexOf('Layers:'));
    expect(held).toContain(why);
    expect(held).not.toContain('$ref');
    expect((await onlyRun(h)).status).toBe('awaiting_review');
    expect(h.calls.map((c) => c.name)).not.toContain('fs.write_file');
    // Approved, it sends exactly what was shown; the card showed the values, so it is not asked for a second time.
    const approvedAt = h.output().length;
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/);
    expect(h.output().slice(approvedAt)).not.toMatch(/takes values from earlier steps that nobody has seen yet/);
    expect(readFileSync(path, 'utf8')).toBe('Echo: hello');
  });
});

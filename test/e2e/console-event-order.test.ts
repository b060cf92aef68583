/**
 * Events are printed in the order they happened (issue 25): a step started in the same transition in which its
 * sibling failed is shown running first, and Stop's notice comes before the lines of the steps it cancels.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The index of the first printed line that starts with `start` (-1 when none). */
const lineOf = (harness: Harness, start: string) =>
  harness
    .output()
    .split('\n')
    .findIndex((l) => l.trimStart().startsWith(start));

describe('console events in the order they happened (postgres)', () => {
  it('a sibling failed in the transition that started b: "▶ b running" is printed before "✖ cheap failed"', async () => {
    const plan = planReply([
      { id: 'a', tool: 'everything.echo', args: { message: 'a' } },
      { id: 'b', tool: 'everything.echo', args: { message: 'b' }, dependsOn: ['a'] },
      // Its argument points past a's output: it fails as it would start, in the transition that starts b.
      {
        id: 'cheap',
        tool: 'everything.echo',
        args: { message: { $ref: 'steps.a.output.content[7].text' } },
        dependsOn: ['a'],
        optional: true,
      },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['b ran; cheap could not.'] }),
    });
    await h.type('review all');
    await h.type('echo a, then b and cheap');
    await h.waitFor(/Type "approve"/);
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/);

    const running = lineOf(h, '▶ b running');
    const failed = lineOf(h, '✖ cheap failed');
    expect(running).toBeGreaterThan(lineOf(h, '✔ a succeeded'));
    expect(failed).toBeGreaterThan(running);
    expect(lineOf(h, '✔ b succeeded')).toBeGreaterThan(running);
  });

  it('Stop: "i Stopping…" is printed before "■ s1 cancelled" and "↷ s2 skipped", the steps it ended', async () => {
    const plan = planReply([
      { id: 's1', tool: 'everything.trigger-long-running-operation', args: { duration: 5, steps: 5 } },
      { id: 's2', tool: 'everything.echo', args: { message: 'after' }, dependsOn: ['s1'] },
    ]);
    h = await startHarness({
      db: 'postgres',
      servers: [everythingStdioConfig()],
      script: byRole({ planner: [plan], synthesizer: ['Stopped before s2.'] }),
    });
    await h.type('wait, then echo');
    await h.waitFor(/▶ s1 running/);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);

    const stopping = lineOf(h, 'i Stopping: steps in flight are cancelled');
    expect(stopping).toBeGreaterThan(lineOf(h, '▶ s1 running'));
    expect(lineOf(h, '■ s1 cancelled')).toBeGreaterThan(stopping);
    expect(lineOf(h, '↷ s2 skipped')).toBeGreaterThan(stopping);
  });
});

import { describe, expect, it } from 'vitest';
import { planSchema } from '../../src/engine/plan/plan-schema.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, type Harness, useAuditHarness } from './harness.ts';

const t = useAuditHarness();

const sleep = (id: string, ms: number, dependsOn: string[] = []) => ({
  id,
  tool: 'audit.sleep',
  args: { ms },
  dependsOn,
});
const note = (id: string, text: string, dependsOn: string[] = []) => ({
  id,
  tool: 'audit.note',
  args: { text },
  dependsOn,
});
// Three steps on the slow tool: before issue 25, each got a breakpoint of its own, and approve stopped at the first.
const slowPlan = (tag: number) =>
  planReply([sleep('a', tag), sleep('b', tag + 1, ['a']), note('n', `run ${tag}`, ['b']), sleep('c', tag + 2, ['n'])]);
const SUGGESTED =
  'Suggested breakpoints (not set; "approve" does not stop at them):\n  before a: you stopped a run using audit.sleep before\nType "break suggested" to hold before them; suggestions off: "suggestions off".';

/** The calls the audit server received, as `name args`, oldest first. */
const callsAt = () =>
  t.audit
    .entries()
    .filter((e) => e.type === 'call')
    .map((e) => `${e.name} ${JSON.stringify(e.args)}`);

/** Types a request and waits for its card; returns the console text from the request on. */
async function cardFor(h: Harness, request: string): Promise<string> {
  const from = h.output().length;
  await h.type(request);
  await h.waitFor(/=== Plan \(revision 0[^]*Type "approve"/, 15_000, from);
  return h.output().slice(from);
}

describe('suggested breakpoints stay suggestions (issue 25), on the console with the audit server (postgres)', () => {
  it('one stop: the next card offers one breakpoint, approve runs to the end, taking it holds, and it can be turned off', async () => {
    const h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({
        planner: [planReply([sleep('long', 20_000)]), slowPlan(10), slowPlan(20), slowPlan(30), slowPlan(40)],
        synthesizer: ['stopped', 'held and stopped', 'all done', 'done again'],
      }),
    });
    await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());

    // One stop of a run using the slow tool.
    expect(await cardFor(h, 'sleep a long time')).not.toContain('Suggested breakpoints');
    await h.type('approve');
    await waitUntil('the server to receive the long sleep', () => callsAt().length === 1);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    await h.steward.idle();

    // The next card offers one breakpoint, before the first step on that tool; taking it holds the run there.
    const second = await cardFor(h, 'sleep three times');
    expect(second).toContain(SUGGESTED);
    let from = h.output().length;
    await h.type('break suggested');
    await h.waitFor(/Breakpoints: before a\./, 15_000, from);
    await h.type('approve');
    await h.waitFor(/=== Breakpoint before a ===/, 15_000, from);
    expect(callsAt()).toEqual(['sleep {"ms":20000}']);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/, 15_000, from);
    await h.steward.idle();

    // Suggestions off: the next card offers none. Cancel is no intervention.
    from = h.output().length;
    await h.type('suggestions off');
    await h.waitFor(/From now on your plan cards suggest no breakpoints/, 15_000, from);
    expect(await cardFor(h, 'sleep three times again')).not.toContain('Suggested breakpoints');
    from = h.output().length;
    await h.type('cancel');
    await h.waitFor(/Cancelled by/, 15_000, from);
    await h.steward.idle();
    await h.type('suggestions on');

    // Offered again, and approve alone runs to the end: every call reaches the server, no breakpoint holds.
    expect(await cardFor(h, 'sleep three times, once more')).toContain(SUGGESTED);
    from = h.output().length;
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/, 15_000, from);
    expect(h.output().slice(from)).not.toContain('=== Breakpoint');
    expect(callsAt().slice(1)).toEqual([
      'sleep {"ms":30}',
      'sleep {"ms":31}',
      'note {"text":"run 30"}',
      'sleep {"ms":32}',
    ]);
    await h.steward.idle();

    // That uneventful run retires the suggestion: one stop does not make every later plan hold, or even ask.
    expect(await cardFor(h, 'sleep three times, last time')).not.toContain('Suggested breakpoints');
  });

  it('a card shown again after a restart offers the same suggestion, and it is still only offered', async () => {
    const h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({ planner: [planReply([sleep('long', 20_000)])], synthesizer: ['stopped', 'done'] }),
    });
    await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());
    await cardFor(h, 'sleep a long time');
    await h.type('approve');
    await waitUntil('the server to receive the long sleep', () => callsAt().length === 1);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    await h.steward.idle();

    // A run left waiting for review by a process that died: this process takes it over and shows its card again.
    const id = crypto.randomUUID();
    const at = new Date();
    await h.store.createRun({
      id,
      conversation: { channel: 'console', key: 'console' },
      requester: { id: 'ada', channel: 'console' },
      request: 'Sleep three times.',
      at,
    });
    await h.store.saveRevision(id, 0, planSchema.parse(JSON.parse(slowPlan(50))), 'planned', at);
    await h.store.transition(id, ['planning'], 'awaiting_review', { at });
    let from = h.output().length;
    await h.steward.recover();
    expect(await h.waitFor(/=== Plan[^]*?Type "approve"/, 15_000, from)).toContain(SUGGESTED);
    expect((await h.store.getRun(id))!.breakpoints).toEqual([]);

    from = h.output().length;
    await h.type('approve');
    await h.waitFor(/=== Report \(completed\) ===/, 15_000, from);
    expect(h.output().slice(from)).not.toContain('=== Breakpoint');
    expect(callsAt().slice(1)).toEqual([
      'sleep {"ms":50}',
      'sleep {"ms":51}',
      'note {"text":"run 50"}',
      'sleep {"ms":52}',
    ]);
  });
});

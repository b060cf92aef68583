import { describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, type Harness, useAuditHarness } from './harness.ts';

const t = useAuditHarness();
let h: Harness | undefined;

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

describe('interleaved runs and cancellation, seen from the MCP server (postgres)', () => {
  it('stop cancels the call in flight: the server receives the cancellation; nothing starts after it', async () => {
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      script: byRole({
        planner: [planReply([sleep('long', 20_000), note('after', 'never', ['long'])])],
        synthesizer: ['stopped'],
      }),
    });
    await h.type('sleep, then note');
    await h.waitFor(/risk MEDIUM/);
    await h.type('approve');
    await h.waitFor(/▶ long running/);
    // The card says running once the call's intent is stored; the call itself may still be on its way.
    await waitUntil('the server to receive the call', () => t.audit.entries().some((e) => e.type === 'call'));
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    await h.steward.idle();
    // The run is over; the server writes the cancellation when it gets it, in its own process.
    await waitUntil('the server to record the cancellation', () =>
      t.audit.entries().some((e) => e.type === 'cancelled'),
    );
    expect(t.audit.entries().map((e) => [e.type, e.name])).toEqual([
      ['call', 'sleep'],
      ['cancelled', 'sleep'],
    ]);
  });

  it('three runs at different points (breakpoint, amending, running) never reach each other', async () => {
    const plans: Record<string, string> = {
      A: planReply([note('a1', 'A1'), note('a2', 'A2', ['a1'])]),
      B: planReply([sleep('b1', 300), note('b2', 'B2', ['b1'])]),
      C: planReply([sleep('c1', 600), note('c2', 'C2', ['c1'])]),
    };
    const amendedB = planReply([sleep('b1', 300), note('b2', 'B2-amended', ['b1'])]);
    let bAmended = false;
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      settings: { approvers: [] },
      script: byRole({
        planner: (req) => {
          const key = /run (\w)/.exec(req.lastUserText)?.[1] ?? '?';
          if (req.lastUserText.includes('change B')) {
            bAmended = true;
            return { delayMs: 400, text: amendedB };
          }
          return plans[key] ?? 'no plan';
        },
        classifier: 'amend',
        synthesizer: (req) => `report for ${/run (\w)/.exec(req.lastUserText)?.[1]}`,
      }),
    });
    const actor = { id: 'ada', channel: 'test' };
    const conv = (k: string) => ({ channel: 'test', key: `thread-${k}` });
    await h.store.setReviewPreference(actor, 'all', new Date());
    for (const k of ['A', 'B', 'C']) await h.steward.message({ conversation: conv(k), actor, text: `run ${k}` });
    const ids = Object.fromEntries(
      (await h.db.db.selectFrom('runs').select(['id', 'conversation_key']).execute()).map((r) => [
        r.conversation_key.slice(-1),
        r.id,
      ]),
    );
    await h.steward.decision({ runId: ids.A!, revision: 0, action: 'breakpoint', stepIds: ['a1'], on: true, actor });
    for (const k of ['A', 'B', 'C'])
      await h.steward.decision({ runId: ids[k]!, revision: 0, action: 'approve', actor });
    // A holds at its breakpoint; B is amended (the planner takes 400 ms); C runs; a pause of C must not touch A or B.
    const amending = h.steward.message({ conversation: conv('B'), actor, text: 'change B: shout the note' });
    await h.waitFor(/Breakpoint after a1/);
    await h.steward.decision({ runId: ids.C!, revision: 0, action: 'pause', actor });
    await amending;
    expect(bAmended).toBe(true);
    // The planner saw tool outputs when it rewrote b2 (a medium-risk note), so b2 waits for a person.
    await h.waitFor(/Step b2 \(audit\.note\) was added or changed by an amendment written after seeing tool outputs\./);
    await h.steward.decision({ runId: ids.B!, revision: 1, action: 'approve', actor });
    expect((await h.store.getRun(ids.A!))!.status).toBe('paused');
    await h.steward.decision({ runId: ids.A!, revision: 0, action: 'resume', actor });
    await h.steward.decision({ runId: ids.C!, revision: 0, action: 'resume', actor });
    await h.steward.idle();
    for (const k of ['A', 'B', 'C']) expect((await h.store.getRun(ids[k]!))!.status).toBe('completed');
    const notes = t.audit
      .entries()
      .filter((e) => e.name === 'note')
      .map((e) => e.args!.text)
      .sort();
    expect(notes).toEqual(['A1', 'A2', 'B2-amended', 'C2']);
    expect((await h.store.listDecisions(ids.C!)).map((d) => d.action)).toEqual(['approve', 'pause', 'resume']);
    expect((await h.store.listDecisions(ids.A!)).map((d) => d.action)).toEqual(['breakpoint', 'approve', 'resume']);
    expect((await h.store.listDecisions(ids.B!)).map((d) => d.action)).toEqual(['approve', 'amend', 'approve']);
  });
});

describe('token budgets (postgres)', () => {
  it('a person past their daily budget gets a clear message and no planner call', async () => {
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      settings: { budgets: { perRun: 1_000_000, perUserPerDay: 10 } },
      script: byRole({}),
    });
    await h.type('note something');
    await h.waitFor(/✖ I could not plan this request: ada has used today's budget of 10 model tokens/);
    expect(h.llm.requests).toEqual([]);
  });

  it('a run that reaches its budget keeps every result: the report is then written by code', async () => {
    const budgets = { perRun: 1_000_000, perUserPerDay: 1_000_000 };
    h = await t.start({
      db: 'postgres',
      servers: [t.audit.config()],
      settings: { budgets },
      script: byRole({ planner: [planReply([note('n', 'kept')])] }),
    });
    await h.type('note something');
    await h.waitFor(/risk MEDIUM/);
    budgets.perRun = 1;
    await h.type('approve');
    await h.waitFor(
      /=== Report \(completed\) ===\nRun completed\. \(The report writer failed \(this run has used its budget of 1 model tokens\), so here are the step results\.\)\nn \(audit\.note, no description\): SUCCEEDED — noted: kept/,
    );
    expect(h.llm.requests.map((r) => r.role)).toEqual(['planner']);
  });
});

/**
 * Assistants end to end on the console (issue 16): an approver sets one up by command, `ask ops: …` plans with its
 * instructions and only its granted tools, a plan naming a tool it is not granted is refused by validation (and
 * repaired), and a grant revoked after approval is refused at call time: the audit server never receives the call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { createAuditServer, onlyRun, planReply, startHarness, type AuditServer, type Harness } from './harness.ts';

let h: Harness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

/** The tools the audit server received calls of, in order (counted at the server, not in the database). */
const calledTools = () => (audit?.entries() ?? []).filter((e) => e.type === 'call').map((e) => e.name);

const INSTRUCTIONS = 'Look people up before you write anything down.';

/** Ada (an approver) makes the `ops` Assistant: the audit server's lookup and note tools, nothing else. */
async function setUpOps(harness: Harness): Promise<void> {
  await harness.type('assistant create ops "Operations: contacts and notes"');
  await harness.type(`assistant ops instructions "${INSTRUCTIONS}"`);
  await harness.type('assistant ops grant audit.lookup allow');
  await harness.type('assistant ops grant audit.note allow');
  await harness.waitFor(/"ops": allow the tool audit\.note\./);
}

describe.each(['postgres', 'pglite'] as const)('Assistants on the console, %s', (db) => {
  it('`ask ops: …` plans with its instructions and only its granted tools, and says whose the run is', async () => {
    audit = createAuditServer();
    h = await startHarness({
      db,
      servers: [audit.config()],
      settings: { approvers: ['console:ada'] },
      script: byRole({
        planner: [planReply([{ id: 'find', tool: 'audit.lookup', args: { answer: 'Ada Lovelace' } }])],
        synthesizer: ['Found Ada Lovelace.'],
      }),
    });
    await setUpOps(h);
    // Answers to Assistant commands are notices like every other, with the same prefix.
    expect(h.output()).toMatch(/^i Created the Assistant "ops"\./m);
    expect(h.output()).toMatch(/^i "ops": allow the tool audit\.note\.$/m);
    await h.type('ask nobody: who is Ada?');
    await h.waitFor(/There is no Assistant named "nobody"\. There are: ops\./);

    await h.type('ask ops: who is Ada?');
    await h.waitFor(/=== Report \(completed\) ===\nReport of the Assistant "ops":\nFound Ada Lovelace\./);
    await h.steward.idle();
    // One report, once: streamed with the words that were stored, so it is never printed a second time.
    expect(h.output().match(/Found Ada Lovelace\./g)).toHaveLength(1);
    expect(h.output().match(/=== Report/g)).toHaveLength(1);
    expect(h.output()).not.toContain('not the final report');
    expect(h.output()).toContain('Assistant ops: Do the work');

    const run = await onlyRun(h);
    expect(run).toMatchObject({ assistant: 'ops', request: 'who is Ada?', status: 'completed' });
    const planner = h.llm.requests.find((r) => r.role === 'planner')!;
    expect(planner.system).toContain('You plan as the Assistant "ops": Operations: contacts and notes');
    expect(planner.system).toContain(INSTRUCTIONS);
    expect(planner.system).toContain('- audit.lookup');
    expect(planner.system).toContain('- audit.note');
    // Granted neither by a tool's row, nor by its server's, and the default is deny.
    for (const hidden of ['audit.send', 'audit.search', 'audit.sleep']) expect(planner.system).not.toContain(hidden);
    expect(calledTools()).toEqual(['lookup']);
  });

  it('with no Assistants, `ask john: …` or `Question: …` is simply a request to Steward', async () => {
    audit = createAuditServer();
    const answer = (text: string) => JSON.stringify({ summary: 'answer', needsTools: false, answer: text, steps: [] });
    h = await startHarness({
      db,
      servers: [audit.config()],
      script: byRole({ planner: [answer('John is not here.'), answer('It is green.')] }),
    });
    await h.type('ask john: are you there?');
    await h.waitFor(/John is not here\./);
    await h.type('Question: is the build green?');
    await h.waitFor(/It is green\./);

    expect(h.output()).not.toContain('There is no Assistant');
    const planned = h.llm.requests.filter((r) => r.role === 'planner').map((r) => r.lastUserText);
    expect(planned[0]).toContain('Request:\nask john: are you there?');
    expect(planned[1]).toContain('Request:\nQuestion: is the build green?');
  });

  it('a plan step naming a tool the Assistant is not granted is refused by validation, naming tool and Assistant', async () => {
    audit = createAuditServer();
    h = await startHarness({
      db,
      servers: [audit.config()],
      settings: { approvers: ['console:ada'] },
      script: byRole({
        planner: [
          planReply([{ id: 'mail', tool: 'audit.send', args: { to: 'ada@example.com', body: 'hi' } }]),
          planReply([{ id: 'find', tool: 'audit.lookup', args: { answer: 'Ada' } }]),
        ],
        synthesizer: ['Looked Ada up instead.'],
      }),
    });
    await setUpOps(h);
    await h.type('ask ops: write to Ada');
    await h.waitFor(/Report of the Assistant "ops":\nLooked Ada up instead\./);

    const repair = h.llm.requests.filter((r) => r.role === 'planner')[1]!;
    expect(repair.lastUserText).toContain('tool "audit.send" is not granted to the Assistant "ops"');
    expect(calledTools()).toEqual(['lookup']);
  });

  it('a grant revoked after approval is refused at call time, and the server never receives the call', async () => {
    audit = createAuditServer();
    h = await startHarness({
      db,
      servers: [audit.config()],
      settings: { approvers: ['console:ada'] },
      script: byRole({
        planner: [
          planReply([
            { id: 'find', tool: 'audit.lookup', args: { answer: 'Ada' } },
            { id: 'write', tool: 'audit.note', args: { text: 'met Ada' }, dependsOn: ['find'] },
          ]),
        ],
        synthesizer: ['The note was not written.'],
      }),
    });
    await setUpOps(h);
    await h.type('ask ops: look Ada up and note it');
    // The note is a side effect: the plan waits for review. Ada holds it after the lookup, then approves.
    await h.waitFor(/=== Plan \(revision 0, risk MEDIUM\) ===/);
    await h.type('break find');
    await h.type('approve');
    await h.waitFor(/=== Breakpoint after find ===/);
    const run = await onlyRun(h);
    await h.type('assistant ops revoke audit.note');
    await h.waitFor(/Revoked the grant of "ops" for tool audit\.note\./);
    await h.type('continue');
    await h.waitFor(/Report of the Assistant "ops":\nThe note was not written\./);

    const write = (await h.store.listStepAttempts(run.id)).find((a) => a.stepId === 'write')!;
    expect(write.status).toBe('failed');
    expect(write.error).toMatchObject({ code: 'not_granted' });
    expect(write.error?.message).toContain('audit.note is not granted to the Assistant "ops"');
    expect(h.calls.map((c) => c.name)).toEqual(['audit.lookup']);
    expect(calledTools()).toEqual(['lookup']);
  });
});

describe('Assistant command answers on the console', () => {
  it('a refusal prints with "!", as every other refusal on the console; a list shown or a change made with "i"', async () => {
    audit = createAuditServer();
    h = await startHarness({ db: 'postgres', servers: [audit.config()], script: byRole({}) });
    // Ada is no approver here.
    await h.type('assistant create ops "Operations"');
    await h.waitFor(/^! Only approvers can create or change Assistants\.$/m);
    await h.type('assistant ghost');
    await h.waitFor(/^! There is no Assistant named "ghost"\. There are none yet\.$/m);
    await h.type('assistant ops grant');
    await h.waitFor(/^! Name a tool \(server\.tool\) or a server: /m);
    await h.type('assistants');
    await h.waitFor(/^i There are no Assistants yet\./m);
    expect(h.output()).not.toMatch(/^i (Only approvers|There is no Assistant)/m);
    expect(await h.db.db.selectFrom('assistants').select('name').execute()).toEqual([]);
  });
});

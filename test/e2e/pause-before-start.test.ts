/**
 * A Pause another process took is a promise: no step starts after it, even one the owner decided to start before it
 * heard of the Pause. (Found by the scenario matrix under load, Discord, resume × delegate × a second process: the
 * press was answered and queued, the step in flight ended, and the next step reached the server before the owner
 * applied the Pause.) The owner's start of a step is written only if no Pause or Stop is stored or queued for the
 * run; a start held that way waits, the queued decision is applied, and the run pauses with the step not sent.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createAuditServer, onlyRun, planReply, startHarness, type AuditServer, type Harness } from './harness.ts';

let h: Harness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

describe('a Pause queued by another process (postgres)', () => {
  it('holds the next step even when the step before it ends first: the step is sent only after Resume, once', async () => {
    audit = createAuditServer();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    h = await startHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: byRole({
        planner: [
          planReply([
            { id: 'think', kind: 'llm', args: { prompt: 'Think about it.' } },
            { id: 'w', tool: 'audit.note', args: { text: 'written' }, dependsOn: ['think'] },
          ]),
        ],
        llm_step: async () => {
          await gate;
          return 'Thought.';
        },
        synthesizer: ['The note is written.'],
      }),
    });
    await h.type('write the note');
    await h.waitFor(/risk /);
    await h.type('approve');
    await waitUntil('think to be asked of the model', () => h!.llm.requests.some((r) => r.role === 'llm_step'));
    const run = await onlyRun(h);
    const notes = () => audit!.entries().filter((e) => e.type === 'call' && e.name === 'note').length;

    // Another process answered a Pause press on this run and queued it for its owner, whose notification of it has
    // not arrived yet (inserted without one, so the owner cannot have applied it when `think` ends).
    const pause = {
      runId: run.id,
      revision: run.revision,
      action: 'pause',
      actor: { id: 'ada', name: 'ada', channel: 'console' },
    };
    await sql`INSERT INTO run_commands (run_id, command) VALUES (${run.id}, ${JSON.stringify(pause)}::jsonb)`.execute(
      h.db.db,
    );
    open();

    await waitUntil('the run to be paused', async () => (await h!.store.getRun(run.id))?.status === 'paused');
    await h.waitFor(/Paused: steps already running will finish; nothing new starts until you resume\. \(ada\)/);
    await waitUntil('think to end', async () =>
      (await h!.store.listStepAttempts(run.id)).some((a) => a.stepId === 'think' && a.endedAt),
    );
    // What the tool server received: nothing after the Pause.
    expect(notes()).toBe(0);
    expect((await h.store.listStepAttempts(run.id)).map((a) => a.stepId)).toEqual(['think']);

    await h.type('resume');
    await h.waitFor(/=== Report \(completed\) ===/);
    await h.steward.idle();
    expect(notes()).toBe(1);
    expect((await h.store.getRun(run.id))?.status).toBe('completed');
  });
});

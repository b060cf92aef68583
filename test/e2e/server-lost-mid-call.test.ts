/**
 * Issue 11, item 3, end to end: an MCP server that dies in the middle of a call on a tool that is not idempotent
 * (it sends an e-mail). Like a crash of Steward itself mid-call, the run holds with "may have acted already" and the
 * person decides; nothing is sent again on its own; resume sends it again once the server is back. The flood
 * fixture logs every call it really receives, before it acts (and, the first time, before it exits).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { onlyRun, planReply, startHarness, type Harness } from './harness.ts';

const FLOOD = join(import.meta.dirname, '../fixtures/flood-server.mjs');

describe('a server that dies mid-call on a step that is not idempotent', () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the run with "may have acted already", sends nothing again on its own, and resume sends it again', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-lost-mid-call-'));
    const callsLog = join(dir, 'calls.log');
    const dieOnce = join(dir, 'die-once');
    writeFileSync(dieOnce, '');
    const received = () =>
      existsSync(callsLog)
        ? readFileSync(callsLog, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as { name: string }).name)
        : [];
    const flood = serverConfig('mail', {
      command: process.execPath,
      args: [FLOOD],
      env: { CALLS_LOG: callsLog, DIE_ONCE: dieOnce },
    });
    h = await startHarness({
      db: 'postgres',
      servers: [flood],
      script: byRole({
        planner: [
          planReply([
            { id: 'send', tool: 'mail.send', args: { to: 'ada@example.com' } },
            { id: 'after', tool: 'mail.echo', args: { text: 'done' }, dependsOn: ['send'] },
          ]),
        ],
        synthesizer: ['The mail went out once the server was back.'],
      }),
    });
    const harness = h;
    await harness.type('send the mail to ada');
    await harness.waitFor(/risk MEDIUM/);
    await harness.type('approve');

    await harness.waitFor(
      /! MCP server "mail" went away while mail\.send was running \(its process exited.*\); the tool may have acted already, so send is not safe to repeat blindly: the run is paused\. Resume to run it again, or stop\./,
    );
    const run = await onlyRun(harness);
    await waitUntil(
      'the run to be stored as paused',
      async () => (await harness.store.getRun(run.id))?.status === 'paused',
    );
    // The attempt's end is stored after the warning is shown: wait for it, not for a moment.
    const first = await waitUntil('the interrupted attempt to be stored', async () =>
      (await harness.store.listStepAttempts(run.id)).find((a) => a.stepId === 'send' && a.status !== 'running'),
    );
    expect(first).toMatchObject({
      stepId: 'send',
      attempt: 1,
      status: 'failed',
      error: {
        code: 'interrupted',
        retryable: false,
        message: expect.stringMatching(/may have acted already/) as string,
      },
    });
    expect(harness.output()).not.toMatch(/=== Report/);

    // The server comes back on its own; still nothing is sent until the person decides.
    await waitUntil('the server to be back', () => harness.host.serverStatus()[0]?.up);
    await sleep(500);
    expect(received()).toEqual(['send']);
    expect(harness.calls.map((c) => c.name)).toEqual(['mail.send']);

    await harness.type('resume');
    await harness.waitFor(/=== Report \(completed\) ===\nThe mail went out once the server was back\./);
    expect(received()).toEqual(['send', 'send', 'echo']);
    const attempts = await harness.store.listStepAttempts(run.id);
    expect(attempts.map((a) => [a.stepId, a.attempt, a.status])).toEqual([
      ['send', 1, 'failed'],
      ['send', 2, 'succeeded'],
      ['after', 1, 'succeeded'],
    ]);
    expect((await harness.store.getRun(run.id))?.status).toBe('completed');
  });
});

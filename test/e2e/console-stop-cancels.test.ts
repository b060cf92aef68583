/**
 * Stop cancels only what is in flight, through the real entry point (issue 29): before each step the run lists its
 * server's tools again under the run's stop signal; a Stop mid-call used to send `notifications/cancelled` for those
 * listings too, answered seconds before. Counted on a tap on the real server-everything's stdio pipes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_SCRIPT, serverConfig } from '../helpers/mcp-servers.ts';
import { waitUntil } from '../helpers/wait.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

const TAP = join(import.meta.dirname, '../fixtures/stdio-tap.mjs');
let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Line {
  dir: 'in' | 'out';
  message: { id?: number; method?: string; params?: { name?: string; requestId?: number } };
}

describe('console, Stop mid-call (postgres)', () => {
  it('the server receives exactly one notifications/cancelled, for the call in flight', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-stop-tap-'));
    const wire = join(dir, 'wire.jsonl');
    const lines = () =>
      readFileSync(wire, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
    const received = (method: string) => lines().filter((l) => l.dir === 'in' && l.message.method === method);
    const progress = () => lines().filter((l) => l.dir === 'out' && l.message.method === 'notifications/progress');
    h = await startHarness({
      db: 'postgres',
      servers: [
        serverConfig('everything', { command: process.execPath, args: [TAP, wire, EVERYTHING_SCRIPT, 'stdio'] }),
      ],
      script: byRole({
        planner: [
          planReply([
            { id: 'hello', tool: 'everything.echo', args: { message: 'first' } },
            {
              id: 'wait',
              tool: 'everything.trigger-long-running-operation',
              args: { duration: 30, steps: 30 },
              dependsOn: ['hello'],
            },
          ]),
        ],
        synthesizer: ['Stopped while waiting.'],
      }),
    });
    await h.type('say hello, then wait');
    await h.waitFor(/▶ wait running/);
    const call = await waitUntil('the long call to reach the server and report progress', () =>
      progress().length > 0
        ? received('tools/call').find((l) => l.message.params?.name === 'trigger-long-running-operation')
        : undefined,
    );
    // Each step's listing went out (and was answered) before its call: the cancels they used to draw.
    expect(received('tools/list').length).toBeGreaterThanOrEqual(3);
    await h.type('stop');
    await h.waitFor(/=== Report \(stopped\) ===/);
    const atStop = progress().length;
    await waitUntil('progress the server sends after the cancel', () => progress().length > atStop);
    expect(received('notifications/cancelled').map((l) => l.message.params?.requestId)).toEqual([call.message.id]);
  });
});

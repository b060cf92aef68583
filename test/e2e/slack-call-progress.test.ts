/**
 * Progress moves the card (issue 29) on Slack, through the real SlackChannel and the fake Slack over HTTP: a call to
 * server-everything's long-running operation that reports progress every 10 ms shows on the card while it runs, yet
 * the card is edited about once a second, not once per report (chat.update is Tier 3, about 50 a minute).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allTexts } from '../bot/slack/fixtures.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_SCRIPT, serverConfig } from '../helpers/mcp-servers.ts';
import { planReply, waitForStoredEnd } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';

const TAP = join(import.meta.dirname, '../fixtures/stdio-tap.mjs');
let h: SlackHarness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('slack, a call that reports progress (postgres)', () => {
  it('300 progress reports in 3 s show on the card while the step runs, in about one edit a second', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-progress-tap-'));
    const wire = join(dir, 'wire.jsonl');
    h = await startSlackHarness({
      db: 'postgres',
      servers: [
        serverConfig('everything', { command: process.execPath, args: [TAP, wire, EVERYTHING_SCRIPT, 'stdio'] }),
      ],
      script: byRole({
        planner: [
          planReply([
            {
              id: 'long',
              tool: 'everything.trigger-long-running-operation',
              args: { duration: 3, steps: 300 },
              description: 'a slow job',
            },
          ]),
        ],
        synthesizer: ['The slow job finished.'],
      }),
    });
    const thread = await h.mention('run the slow job');
    const runId = await onlyRunId(h);
    const card = h.card(thread);
    // Seen on the card while the call runs: the step's attempt has not ended yet.
    await h.waitFor('the card to show the call’s progress', () =>
      /⏳ \*1\.\* `long`.*running: calling everything\.trigger-long-running-operation: \d+ \/ 300/.test(
        messageText(h!.card(thread)),
      ),
    );
    expect((await h.store.listStepAttempts(runId)).map((a) => a.status)).toEqual(['running']);

    const end = await waitForStoredEnd(h.store, runId, 'long');
    expect(end.status).toBe('succeeded');
    await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => messageText(m).includes('The slow job finished.')),
    );
    await h.channel.settled();

    const reports = readFileSync(wire, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{"dir":"out"') && l.includes('"notifications/progress"')).length;
    expect(reports).toBe(300);
    const edits = h.slack.callsOf('chat.update').filter((c) => c.args.ts === card.ts);
    const amounts = edits
      .map((c) => /: (\d+) \/ 300/.exec(allTexts(c.args.blocks).join('\n'))?.[1])
      .filter((n) => n !== undefined)
      .map(Number);
    // The card moved: more than one amount shown, each further on than the one before.
    expect(amounts.length).toBeGreaterThanOrEqual(2);
    expect([...amounts].sort((a, b) => a - b)).toEqual(amounts);
    expect(new Set(amounts).size).toBe(amounts.length);
    // At most one edit per second of the call, plus the step's start, its end and the run's final state.
    const callSeconds = (end.endedAt!.getTime() - end.startedAt.getTime()) / 1000;
    expect(edits.length).toBeLessThanOrEqual(Math.ceil(callSeconds) + 3);
  });
});

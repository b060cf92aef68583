/**
 * Issue 16, item 5: a conversation's earlier turns go into the next plan's prompt as the person's words and
 * Steward's final replies only, never as raw tool outputs, so a follow-up after a 1 MB output costs about what it
 * costs after a 1 KB one; the output stays in the database, and a later plan reads it on demand with the built-in
 * `steward.step_output` tool (counted at the tool server: that read never reaches it).
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { outputText } from '../../src/engine/text.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

const FLOOD = join(import.meta.dirname, '../fixtures/flood-server.mjs');

describe('a follow-up request in the same conversation (console, postgres)', () => {
  let h: Harness | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await h?.close();
    h = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** Runs "read the page" (a page of `bytes` bytes), then a follow-up; returns what the follow-up's planner saw. */
  async function followUp(bytes: number) {
    const dir = mkdtempSync(join(tmpdir(), 'steward-earlier-turns-'));
    dirs.push(dir);
    const callsLog = join(dir, 'calls.log');
    h = await startHarness({
      db: 'postgres',
      servers: [serverConfig('web', { command: process.execPath, args: [FLOOD], env: { CALLS_LOG: callsLog } })],
      script: byRole({
        planner: [
          planReply([{ id: 's1', tool: 'web.flood', args: { bytes } }]),
          planReply([
            { id: 'middle', tool: 'steward.step_output', args: { turn: 1, step: 's1', offset: 10, length: 40 } },
          ]),
        ],
        synthesizer: ['The page is long and made of x.', 'The middle of the page is x as well.'],
      }),
    });
    const harness = h;
    await harness.type('read the page');
    await harness.waitFor(/The page is long and made of x\./);
    await harness.steward.idle();
    await harness.type('what is in the middle of that page?');
    await harness.waitFor(/The middle of the page is x as well\./);
    await harness.steward.idle();

    const runs = await harness.db.db.selectFrom('runs').select(['id', 'request']).orderBy('created_at').execute();
    const second = runs[1];
    if (!second) throw new Error('the follow-up made no run');
    const planner = harness.llm.requests.filter((r) => r.role === 'planner');
    const usage = await harness.store.llmUsageForRun(second.id);
    const [attempt] = await harness.store.listStepAttempts(second.id);
    const [first] = await harness.store.listStepAttempts(runs[0]?.id ?? '');
    const firstText = outputText(first?.output ?? null);
    const received = existsSync(callsLog) ? readFileSync(callsLog, 'utf8').split('\n').filter(Boolean) : [];
    return {
      prompt: planner[1]?.lastUserText ?? '',
      body: JSON.stringify(planner[1]?.body ?? null),
      plannerInputTokens: usage.byRole.planner?.inputTokens ?? 0,
      attempt,
      firstText,
      received,
    };
  }

  it('sees the earlier words and reply and the output by size, never the output itself; reads it on demand', async () => {
    const big = await followUp(1_000_000);

    expect(big.prompt).toContain(
      'Turn 1 (completed):\nPerson: read the page\nSteward: The page is long and made of x.',
    );
    // The host keeps at most 1 MB of an output (cut with a note); the prompt names the size of what was kept.
    expect(big.prompt).toMatch(/Outputs kept: s1 \((\d{3}\.\d KB|1\.0 MB)\)/);
    expect(big.prompt).toContain('Request:\nwhat is in the middle of that page?');
    // Not one run of the page's text reached the model.
    expect(big.body).not.toContain('x'.repeat(50));
    // The built-in read answered from the database: 40 characters from offset 10, and where the rest is.
    expect(big.attempt).toMatchObject({ stepId: 'middle', status: 'succeeded' });
    expect(big.attempt?.output).toMatchObject({
      content: [{ type: 'text', text: 'x'.repeat(40) }],
      structuredContent: { turn: 1, step: 's1', offset: 10, returned: 40, total: big.firstText.length, nextOffset: 50 },
    });
    // The page server got the first run's call only: the read never reached it.
    expect(big.received.map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['flood']);
  });

  it("the follow-up's prompt after a 1 MB output is within a few hundred tokens of the same after 1 KB", async () => {
    const small = await followUp(1_000);
    await h?.close();
    h = undefined;
    const big = await followUp(1_000_000);

    expect(small.plannerInputTokens).toBeGreaterThan(0);
    const grew = big.plannerInputTokens - small.plannerInputTokens;
    console.log(
      `planner input tokens of the follow-up: after 1 KB ${small.plannerInputTokens}, after 1 MB ${big.plannerInputTokens} (${grew >= 0 ? '+' : ''}${grew})`,
    );
    expect(Math.abs(grew)).toBeLessThan(300);
  });
});

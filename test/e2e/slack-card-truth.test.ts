import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { allTexts } from '../bot/slack/fixtures.ts';
import { everythingStdioConfig, filesystemStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const quick = { id: 'quick', tool: 'everything.echo', args: { message: 'kept' }, description: 'say kept' };
const long = {
  id: 'long',
  tool: 'everything.trigger-long-running-operation',
  args: { duration: 30, steps: 30 },
  dependsOn: ['quick'],
  description: 'a slow job',
};

describe('slack card truth, end to end on postgres', () => {
  it('an amendment mid-run that holds a new step keeps finished steps done, Amend and Stop on the card; another amendment at the hold waits again; a press on the ended run answers privately', async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-card-'));
    const save = { id: 'save', tool: 'fs.write_file', args: { path: join(dir, 'out.txt'), content: 'x' } };
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig(), filesystemStdioConfig(dir)],
      script: byRole({
        planner: [
          planReply([quick, long]),
          planReply([quick, long, save]),
          planReply([quick, long, { ...save, args: { ...save.args, content: 'y' } }]),
        ],
        classifier: ['amend', 'amend'],
        synthesizer: ['Stopped; kept what finished.'],
      }),
    });
    const thread = await h.mention('say kept, then run the slow job');
    const runId = await onlyRunId(h);
    await h.waitFor('the slow step to run', async () =>
      (await h!.store.listStepAttempts(runId)).some((a) => a.stepId === 'long' && a.status === 'running'),
    );

    // The amendment adds a write, which waits for approval while the slow step goes on.
    await h.reply(thread, 'also save x to out.txt');
    const held = await h.waitFor(
      'the held card',
      () => messageText(h!.card(thread)).includes('Step save (fs.write_file)') && h!.card(thread),
    );
    const text = messageText(held);
    expect(text).toMatch(/✅ \*1\.\* `quick`/);
    expect(text).toMatch(/⏳ \*2\.\* `long`/);
    expect(text).toMatch(/⚪ \*3\.\* `save`/);
    expect(text).toContain('Step 1/3');
    expect(text).toContain('✋ Steps waiting for approval · revision 1');
    expect(text).toContain('Amend changes the steps not yet run (2 left).');
    expect(text).not.toContain('No amendments left');
    const actions = held.blocks.flatMap((b) =>
      b.type === 'actions' ? (b.elements as Array<{ action_id: string }>).map((e) => e.action_id) : [],
    );
    expect(actions).toEqual([
      ...['steward.approve', 'steward.amend', 'steward.stop', 'steward.ask-first'],
      // The steering row: the plan may still be edited and held after steps not yet run.
      ...['steward.edit-plan', 'steward.breakpoints', 'steward.more'],
    ]);
    expect((await h.store.getRun(runId))!.status).toBe('awaiting_review');
    const oldApprove = h.buttonValue(held, 'approve');

    // Another change while steps are held is taken as an amendment of the steps not yet run: it waits again.
    await h.reply(thread, 'and save y instead');
    await h.waitFor('the held card of revision 2', () =>
      messageText(h!.card(thread)).includes('✋ Steps waiting for approval · revision 2'),
    );
    expect(messageText(h.card(thread))).toMatch(/"content":\s*"y"/);

    expect(await h.press(held, 'stop')).toBe(200);
    await h.waitFor('the report', () =>
      h!.replies(thread).find((m) => messageText(m).includes('Stopped; kept what finished.')),
    );
    await h.steward.idle();
    expect((await h.store.getRun(runId))!.status).toBe('stopped');
    const stopped = messageText(h.card(thread));
    expect(stopped).toContain('⏹️ Stopped');
    expect(stopped).toMatch(/✅ \*1\.\* `quick`/);
    // The notice names the person as a mention (Slack shows the name), not as a raw member id.
    const notices = h.replies(thread).map(messageText).join('\n');
    expect(notices).toContain('Stopping: steps in flight are cancelled; finished results are kept. (<@U0ADA>)');

    // A press on the card as it was before the run ended: only the presser hears that it already ended.
    const before = h.slack.calls.length;
    expect(await h.press(held, 'approve', { value: oldApprove })).toBe(200);
    await h.waitFor('the private reply', () => h!.slack.calls.slice(before).length > 0);
    const after = h.slack.calls.slice(before);
    expect(after.map((c) => c.method)).toEqual(['chat.postEphemeral']);
    expect(after[0]!.args).toMatchObject({ user: 'U0ADA', channel: 'C0GENERAL', thread_ts: thread });
    expect(allTexts(after[0]!.args.blocks).join(' ')).toContain(
      'This run has already ended (stopped); nothing changed.',
    );
    expect((await h.store.listDecisions(runId)).map((d) => [d.action, d.accepted])).toEqual([
      ['amend', true],
      ['amend', true],
      ['stop', true],
      ['approve', false],
    ]);
  });
});

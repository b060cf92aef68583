/**
 * A run's images reach its Slack thread as files (issue 29), through the real Bolt app and the fake Slack's files
 * upload API: files.getUploadURLExternal, the bytes POSTed to the upload URL, files.completeUploadExternal into the
 * run's thread. A workspace whose app lacks files:write gets the report and a line saying why the files are missing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { EVERYTHING_TINY_IMAGE, everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PLAN = planReply([
  { id: 'logo', tool: 'everything.get-tiny-image', args: {} },
  { id: 'again', tool: 'everything.get-tiny-image', args: {} },
]);

async function start(): Promise<SlackHarness> {
  h = await startSlackHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({ planner: [PLAN], synthesizer: ['Two logos, attached.'] }),
  });
  return h;
}

describe('slack: the files a run produced go with its report', () => {
  it('uploads each image into the run thread, after the report, with a comment naming them', async () => {
    const harness = await start();
    const thread = await harness.mention('show me the MCP logo twice');
    const shared = await harness.waitFor('the files shared in the thread', () =>
      harness.replies(thread).find((m) => m.files?.length),
    );
    const replies = harness.replies(thread);
    expect(replies.findIndex((m) => m.text.includes('Two logos, attached.'))).toBeLessThan(replies.indexOf(shared));
    expect(shared.files!.map((f) => f.filename)).toEqual(['logo-1.png', 'again-1.png']);
    for (const f of shared.files!) expect(f.bytes!.toString('base64')).toBe(EVERYTHING_TINY_IMAGE);
    expect(shared.text).toBe('Files from this run (2):');
    // The documented sequence, each call with its required arguments.
    const urls = harness.slack.callsOf('files.getUploadURLExternal');
    expect(urls.map((c) => [c.args.filename, Number(c.args.length)])).toEqual([
      ['logo-1.png', Buffer.from(EVERYTHING_TINY_IMAGE, 'base64').length],
      ['again-1.png', Buffer.from(EVERYTHING_TINY_IMAGE, 'base64').length],
    ]);
    expect(harness.slack.callsOf('upload').map((c) => c.status)).toEqual([200, 200]);
    const [complete] = harness.slack.callsOf('files.completeUploadExternal');
    expect(complete?.args).toMatchObject({ channel_id: shared.channel, thread_ts: thread });
  });

  it('says in the thread why the files are missing when the app lacks files:write, and the report stands', async () => {
    const harness = await start();
    harness.slack.scopes = ['chat:write'];
    const thread = await harness.mention('show me the MCP logo twice');
    const note = await harness.waitFor('the note on the files', () =>
      harness.replies(thread).find((m) => m.text.includes('could not be attached')),
    );
    expect(note.text).toBe('Files from this run (2):\n• The files could not be attached (Slack said missing_scope).');
    expect(harness.replies(thread).some((m) => m.text.includes('Two logos, attached.'))).toBe(true);
    expect(harness.slack.callsOf('files.getUploadURLExternal')[0]?.response).toMatchObject({
      ok: false,
      error: 'missing_scope',
      needed: 'files:write',
    });
  });
});

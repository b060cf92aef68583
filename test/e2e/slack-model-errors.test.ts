/**
 * Model failures said plainly in Slack too: the real Bolt app over signed requests, the fake Slack Web API, and the
 * planner behind the fake LLM refusing the key. The thread gets the same sentence as the console, the log the reason.
 */
import { afterEach, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { messageText, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('a planner that refuses the key: the thread says the model refused it, not that the plan was invalid', async () => {
  h = await startSlackHarness({
    db: 'postgres',
    servers: [everythingStdioConfig()],
    script: byRole({ planner: [{ status: 401 }] }),
  });
  const thread = await h.mention('list the files');
  const said = await h.waitFor('the failure in the thread', () =>
    h!.replies(thread).find((m) => messageText(m).includes('could not plan this request')),
  );
  expect(messageText(said)).toMatch(
    /I could not plan this request: the model failed: the OpenAI-compatible server at 127\.0\.0\.1:\d+ refused the API key \(HTTP 401\)/,
  );
  expect(h.replies(thread).map(messageText).join('\n')).not.toContain('valid plan');
  expect(h.logs.some((l) => /^warn model call failed \(planner, openai:planner-model\): .*\(HTTP 401\)/.test(l))).toBe(
    true,
  );
});

/**
 * Assistants on Slack (issue 16): `/steward assistant …` goes to the Assistant commands (changes refused for people
 * who are not approvers, answered privately), `@Steward ask ops: …` makes a run of that Assistant whose card names
 * it, and an unknown name is answered with the names there are.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { onlyRunId, privateCommand, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('Assistants on Slack, end to end on postgres', () => {
  it('approvers set one up by /steward; `@Steward ask ops: …` is its run, with only its granted tools', async () => {
    h = await startSlackHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({
        planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Echo hi' })],
        synthesizer: 'Said hi.',
      }),
    });
    expect(await privateCommand(h, 'assistant create ops "Operations"', 'U0BOB')).toEqual([
      'Only approvers can create or change Assistants.',
    ]);
    expect((await privateCommand(h, 'assistant create ops "Operations"', 'U0BOSS'))[0]).toMatch(
      /^Created the Assistant/,
    );
    expect(await privateCommand(h, 'assistant ops grant everything.echo allow', 'U0BOSS')).toEqual([
      '"ops": allow the tool everything.echo.',
    ]);

    await h.mention('ask nobody: say hi');
    await h.waitFor('the answer', () =>
      h!.slack.calls.find((c) => JSON.stringify(c.args).includes('There is no Assistant named \\"nobody\\"')),
    );
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toEqual([]);

    const thread = await h.mention('ask ops: say hi');
    const card = await h.waitFor('the card', () => h!.card(thread));
    expect(JSON.stringify(card)).toContain('Assistant *ops* · Echo hi');
    const run = await h.store.getRun(await onlyRunId(h));
    expect(run).toMatchObject({ assistant: 'ops', request: 'say hi' });
    const planner = h.llm.requests.find((r) => r.role === 'planner')!;
    expect(planner.system).toContain('- everything.echo');
    expect(planner.system).not.toContain('everything.get-sum');
  });
});

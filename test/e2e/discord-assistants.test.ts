/**
 * Assistants on Discord (issue 16): `/steward assistant command:` goes to the Assistant commands (changes refused for
 * people who are not approvers), and `/steward ask request: ops: …` addresses the Assistant: its run is planned with
 * only its granted tools, and its card says whose it is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { everythingStdioConfig } from '../helpers/mcp-servers.ts';
import { onlyRun, planReply } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const privately = (harness: DiscordHarness, id: string) =>
  harness.waitFor('the private answer', () => harness.privateTexts(id).find(Boolean));

describe('/steward assistant and ask, end to end on postgres', () => {
  it('only approvers change Assistants; `ask ops: …` plans with its granted tools and its card names it', async () => {
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [everythingStdioConfig({ overrides: { risk: 'medium' } })],
      script: byRole({
        planner: [planReply([{ id: 'say', tool: 'everything.echo', args: { message: 'hi' } }], { summary: 'Echo hi' })],
        synthesizer: ['Said hi.'],
      }),
    });
    const as = (user: DiscordHarness['bob'], command: string) => h!.slash('assistant', { command }, { user });
    expect(await privately(h, await as(h.bob, 'create ops "Operations"'))).toBe(
      'Only approvers can create or change Assistants.',
    );
    expect(await privately(h, await as(h.boss, 'assistant create ops "Operations"'))).toMatch(
      /^Created the Assistant "ops"/,
    );
    expect(await privately(h, await as(h.boss, 'ops grant everything.echo allow'))).toBe(
      '"ops": allow the tool everything.echo.',
    );
    expect(await privately(h, await as(h.bob, 'assistants'))).toContain('ops: Operations (1 grant; default deny)');

    await h.slash('ask', { request: 'ops: say hi' });
    const run = await h.waitFor('the run', () => onlyRun(h!).catch(() => undefined));
    const card = await h.waitFor('the card', () => h!.card(run.conversation.key.split(':')[1]!));
    expect(shownText(card.message)).toContain('**Assistant** ops');
    expect(run).toMatchObject({ assistant: 'ops', request: 'say hi' });
    const planner = h.llm.requests.find((r) => r.role === 'planner')!;
    expect(planner.system).toContain('- everything.echo');
    expect(planner.system).not.toContain('everything.get-sum');
  });
});

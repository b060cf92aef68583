/** The /steward command as Discord registers it, and its private answers within one message. */
import { ApplicationCommandOptionType, InteractionContextType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import {
  renderHelp,
  renderPreferenceSet,
  renderRunList,
  renderSuggestionsSet,
  renderWorkflowAnswer,
  STEWARD_COMMAND,
  STEWARD_GUILD_COMMAND,
} from '../../../src/bot/discord/discord-command-text.ts';
import type { RunListing } from '../../../src/engine/channel.ts';
import { messageProblems } from '../../fakes/discord-limits.ts';

describe('/steward', () => {
  it('has the same sub-commands as Slack, and works in servers and DMs', () => {
    expect(STEWARD_COMMAND.name).toBe('steward');
    expect(STEWARD_COMMAND.options?.map((o) => o.name)).toEqual([
      'ask',
      'status',
      'runs',
      'review',
      'suggestions',
      'workflow',
      'assistant',
      'connections',
      'prompt',
      'dashboard',
      'spend',
      'help',
    ]);
    expect(STEWARD_COMMAND.contexts).toEqual([InteractionContextType.Guild, InteractionContextType.BotDM]);
    const ask = STEWARD_COMMAND.options?.[0] as { options?: { name: string; required?: boolean; type: number }[] };
    expect(ask.options).toEqual([
      expect.objectContaining({ name: 'request', required: true, type: ApplicationCommandOptionType.String }),
    ]);
    const review = STEWARD_COMMAND.options?.[3] as { options?: { choices?: { value: string }[] }[] };
    expect(review.options?.[0]?.choices?.map((c) => c.value)).toEqual(['all', 'risky', 'none']);
    const suggestions = STEWARD_COMMAND.options?.[4] as {
      options?: { description: string; required?: boolean; choices?: { value: string }[] }[];
    };
    expect(suggestions.options?.[0]).toMatchObject({ required: true });
    expect(suggestions.options?.[0]?.choices?.map((c) => c.value)).toEqual(['on', 'off']);
    const workflow = STEWARD_COMMAND.options?.[5] as { options?: { name: string; description: string }[] };
    expect(workflow.options).toEqual([
      expect.objectContaining({ name: 'command', required: true, type: ApplicationCommandOptionType.String }),
    ]);
    // Discord refuses a command whose descriptions are over 100 characters.
    const connections = STEWARD_COMMAND.options?.[7] as {
      options?: {
        name: string;
        description: string;
        required?: boolean;
        choices?: { name: string; value: string }[];
      }[];
    };
    expect(connections.options?.map((o) => [o.name, o.required])).toEqual([
      ['action', false],
      ['server', false],
    ]);
    expect(connections.options?.[0]?.choices?.map((c) => c.value)).toEqual([
      'list',
      'connect',
      'disconnect',
      'use',
      'notme',
    ]);
    const all = [STEWARD_COMMAND.options, workflow.options, suggestions.options, connections.options].flat();
    for (const o of all) expect(o?.description.length).toBeLessThanOrEqual(100);
    // Discord refuses choice names over 100 characters as well.
    for (const c of connections.options?.[0]?.choices ?? []) expect(c.name.length).toBeLessThanOrEqual(100);
    expect(STEWARD_GUILD_COMMAND).not.toHaveProperty('contexts');
    expect(STEWARD_GUILD_COMMAND).toMatchObject({ name: 'steward', options: STEWARD_COMMAND.options });
  });

  it('answers help, a preference and run lists in one valid message each', () => {
    expect(renderHelp('I do not know `frobnicate`.').content).toMatch(/^I do not know \\`frobnicate\\`\.\n/);
    const help = renderHelp('A workflow command starts with save, workflows, workflow, fork or schedule.');
    expect(messageProblems(help)).toEqual([]);
    for (const form of ['save <name>', 'workflows', 'workflow <name>', 'fork <name> <new name>', 'schedule <name>'])
      expect(help.content).toContain(`\`${form}`);
    for (const sub of [
      'ask',
      'status',
      'runs',
      'review',
      'suggestions',
      'dashboard',
      'workflow',
      'assistant',
      'connections',
    ])
      expect(help.content).toContain(`\`/steward ${sub}`);
    const answer = renderWorkflowAnswer(`No workflow @everyone <@123> [x](https://evil.test) ${'y'.repeat(5_000)}`);
    expect(messageProblems(answer)).toEqual([]);
    expect(answer.content).toMatch(/^No workflow @\u200beveryone <\u200b@123> /);
    expect(answer.content).toContain('[x]\\(https://evil.test)');
    expect(renderPreferenceSet('all').content).toBe(
      'Noted. From now on I will show you every plan and wait for your approval before running it.',
    );
    expect(renderSuggestionsSet(false).content).toBe(
      'Noted. From now on your plan cards offer no breakpoints (`/steward suggestions on` brings them back).',
    );
    expect(renderSuggestionsSet(true).content).toMatch(/^Noted\. From now on your plan cards offer breakpoints /);
    const run: RunListing = {
      id: 'r1',
      status: 'running',
      statusText: 'running',
      revision: 0,
      request: 'tidy [the] docs @here',
      summary: null,
      conversation: { channel: 'discord', key: 'x' },
      createdAt: new Date(1_700_000_000_000),
    };
    const list = renderRunList(
      Array.from({ length: 200 }, () => run),
      'Your runs',
      'No runs.',
      new Map([['r1', 'https://discord.com/channels/1/2/3']]),
    );
    expect(messageProblems(list)).toEqual([]);
    expect(list.content).toMatch(
      /^\*\*Your runs\*\*\n• ▶️ \*\*running\*\* · \[tidy \\\[the\\\] docs @\u200bhere\]\(https:\/\/discord\.com\/channels\/1\/2\/3\) · <t:1700000000:f>\n/,
    );
    expect(list.content).toMatch(/\n…and \d+ more\.$/);
    expect(renderRunList([], 'Your runs', 'No runs.').content).toBe('No runs.');
  });
});

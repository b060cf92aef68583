/** `/steward`'s autocomplete: which options offer choices, and how typed text picks them within Discord's limits. */
import { describe, expect, it } from 'vitest';
import { matchingChoices } from '../../../src/bot/discord/discord-autocomplete.ts';
import { STEWARD_COMMAND } from '../../../src/bot/discord/discord-command-text.ts';
import { autocompleteProblems, commandProblems } from '../../fakes/discord-limits.ts';

type Option = { name: string; autocomplete?: boolean; options?: Option[] };

describe('/steward autocomplete', () => {
  it("offers choices on workflow's and assistant's command and connections' server, and Discord would register it", () => {
    const offering = (STEWARD_COMMAND.options as Option[]).flatMap((sub) =>
      (sub.options ?? []).filter((o) => o.autocomplete).map((o) => `${sub.name}.${o.name}`),
    );
    expect(offering).toEqual(['workflow.command', 'assistant.command', 'connections.server']);
    expect(commandProblems(STEWARD_COMMAND)).toEqual([]);
  });

  it('matches without regard to case, starting-with first, each once, at most 25, leaving out what Discord cannot take', () => {
    const names = ['workflow report', 'workflows', 'workflow digest', 'workflow digest', `workflow ${'x'.repeat(100)}`];
    expect(matchingChoices(names, 'DIG').map((c) => c.value)).toEqual(['workflow digest']);
    expect(matchingChoices(names, 'work').map((c) => c.value)).toEqual([
      'workflow report',
      'workflows',
      'workflow digest',
    ]);
    expect(matchingChoices(['report', 'workflow report'], 'rep').map((c) => c.value)).toEqual([
      'report',
      'workflow report',
    ]);
    const many = matchingChoices(
      Array.from({ length: 40 }, (_, k) => `workflow w${k}`),
      '',
    );
    expect(many).toHaveLength(25);
    expect(autocompleteProblems({ choices: many })).toEqual([]);
  });
});

/**
 * Autocomplete for `/steward`'s free-text options: while a person types, Discord asks (an interaction of type 4)
 * and shows what comes back. `workflow` offers their workflows as whole commands, `assistant` the Assistants,
 * `connections server:` the servers their list names. It changes nothing, so it is claimed nowhere (any process
 * may answer; a second answer is refused by Discord and ignored), and it always answers in time: a lookup that
 * fails or is slow gives an empty list.
 */
import type { AutocompleteInteraction } from 'discord.js';
import type { InboundHandler } from '../../engine/channel.ts';
import type { Actor } from '../../engine/types.ts';
import type { DiscordDeps } from './discord-messages.ts';

/** Discord shows at most 25 choices; a name and a string value hold at most 100 characters each. */
const MAX_CHOICES = 25;
const MAX_CHOICE = 100;
/** Discord drops an answer after 3 s; the lookup gets this long, so the answer still arrives in time. */
const LOOKUP_MS = 2_000;

/** One offered choice: what Discord shows and what it fills in. */
export interface Choice {
  name: string;
  value: string;
}

/**
 * The candidates that match what was typed (case-insensitive: starting with it first, then containing it), each
 * once and at most 25; one too long for Discord to take is left out rather than offered cut.
 */
export function matchingChoices(candidates: readonly string[], typed: string): Choice[] {
  const wanted = typed.trim().toLowerCase();
  const fits = [...new Set(candidates)].filter((c) => c.length > 0 && c.length <= MAX_CHOICE);
  const starts = fits.filter((c) => c.toLowerCase().startsWith(wanted));
  const contains = fits.filter((c) => !c.toLowerCase().startsWith(wanted) && c.toLowerCase().includes(wanted));
  return [...starts, ...contains].slice(0, MAX_CHOICES).map((c) => ({ name: c, value: c }));
}

/** What a subcommand's option offers this person, as whole values; [] for an option that offers nothing. */
export async function candidatesFor(
  handler: InboundHandler,
  actor: Actor,
  subcommand: string,
  option: string,
): Promise<string[]> {
  if (subcommand === 'workflow' && option === 'command') {
    const workflows = (await handler.workflowsOf(actor)) ?? [];
    return [
      'workflows',
      ...workflows.flatMap((w) => [
        `workflow ${w.name}`,
        `workflow ${w.name} run`,
        ...(w.schedules.length === 0
          ? []
          : [`schedule ${w.name} ${w.schedules.some((s) => s.paused) ? 'resume' : 'pause'}`]),
      ]),
    ];
  }
  if (subcommand === 'assistant' && option === 'command') {
    const names = (await handler.assistantNames?.(actor)) ?? [];
    return ['assistants', ...names.map((n) => `assistant ${n}`)];
  }
  if (subcommand === 'connections' && option === 'server') {
    const answer = await handler.connections(actor, { kind: 'list' });
    return answer.kind === 'list' ? answer.connections.map((c) => c.server) : [];
  }
  return [];
}

/** Answers one autocomplete interaction in time: the matching choices, or none when the lookup fails or is slow. */
export async function answerAutocomplete(i: AutocompleteInteraction, actor: Actor, deps: DiscordDeps): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Choice[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_MS);
  });
  const lookup = (async () => {
    const focused = i.options.getFocused(true);
    const sub = i.options.getSubcommand(false) ?? '';
    const candidates = await candidatesFor(deps.handler, actor, sub, focused.name);
    return matchingChoices(candidates, String(focused.value));
  })().catch((err: unknown) => {
    deps.log('warn', `discord: autocomplete lookup failed (${(err as Error).message})`);
    return [];
  });
  const choices = await Promise.race([lookup, late]).finally(() => clearTimeout(timer));
  // Another process may have answered first (Discord then refuses this one): nothing to do either way.
  await i.respond(choices).catch(() => undefined);
}

/**
 * Slack's AI app split view: when a person opens a new thread with Steward there (`assistant_thread_started`),
 * Steward offers suggested prompts (`assistant.threads.setSuggestedPrompts`, scope assistant:write): running one of
 * their workflows, asking one of the Assistants, else what it can do. Slack takes "up to four suggested prompts", each
 * a `title` and a `message` (https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts); it
 * publishes no length limit for either, so Steward keeps titles short enough to read at a glance.
 */
import type { App } from '@slack/bolt';
import type { InboundHandler, WorkflowOverview } from '../../engine/channel.ts';
import { toActor } from './slack-inbound.ts';

/** Slack shows at most four suggested prompts. */
export const MAX_PROMPTS = 4;
/** Steward's own bound on a prompt's title (Slack gives none): a short label fits the prompt button. */
export const PROMPT_TITLE_MAX = 60;

/** One suggested prompt: the label Slack shows, and the message the person sends by choosing it. */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** The title over the prompts. */
export const PROMPTS_TITLE = 'Try one of these';

/**
 * Up to four prompts for a person: their workflows (run now) and the Assistants (ask one), taking turns so both show
 * when both exist; with neither, a prompt asking what Steward can do.
 */
export function suggestedPrompts(
  workflows: readonly WorkflowOverview[],
  assistants: readonly string[],
): SuggestedPrompt[] {
  const runs = workflows.map((w) => ({ title: cut(`Run workflow ${w.name}`), message: `workflow ${w.name} run` }));
  const asks = assistants.map((name) => ({
    title: cut(`Ask ${name}`),
    message: `ask ${name}: what can you do for me?`,
  }));
  const prompts: SuggestedPrompt[] = [];
  for (let i = 0; prompts.length < MAX_PROMPTS && (i < runs.length || i < asks.length); i++) {
    if (runs[i]) prompts.push(runs[i]!);
    if (asks[i] && prompts.length < MAX_PROMPTS) prompts.push(asks[i]!);
  }
  if (prompts.length === 0)
    prompts.push({ title: 'What can you do?', message: 'What can you do with the tools you have?' });
  return prompts;
}

function cut(title: string): string {
  return title.length <= PROMPT_TITLE_MAX ? title : `${title.slice(0, PROMPT_TITLE_MAX - 1)}…`;
}

/** Registers the listener that offers prompts in each new assistant thread; failures are logged, never shown. */
export function registerAssistantThreads(
  app: App,
  deps: { handler: InboundHandler; track: (work: Promise<void>) => void; log: (message: string) => void },
): void {
  app.event('assistant_thread_started', async ({ event, client }) => {
    const thread = event.assistant_thread;
    const actor = toActor({ id: thread.user_id });
    deps.track(
      (async () => {
        const [workflows, assistants] = await Promise.all([
          deps.handler.workflowsOf(actor),
          deps.handler.assistantNames?.(actor) ?? Promise.resolve([]),
        ]);
        await client.assistant.threads.setSuggestedPrompts({
          channel_id: thread.channel_id,
          thread_ts: thread.thread_ts,
          title: PROMPTS_TITLE,
          prompts: suggestedPrompts(workflows ?? [], assistants),
        });
      })().catch((err: unknown) => deps.log(`slack: no suggested prompts for ${actor.id}: ${(err as Error).message}`)),
    );
  });
}

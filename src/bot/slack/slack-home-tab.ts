/**
 * The App Home tab on Slack: opening it publishes the person's view (views.publish), choosing a review preference
 * there stores it and publishes the view again, and a run's end refreshes the view of its requester when this
 * process showed them their Home. Slack keeps the view, so nothing here is held for long.
 */
import type { App, BlockElementAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { InboundHandler } from '../../engine/channel.ts';
import type { Actor } from '../../engine/types.ts';
import { HOME_REVIEW_ACTION } from './slack-actions.ts';
import { permalinks } from './slack-commands.ts';
import { toPreference } from './slack-controls.ts';
import { renderHome } from './slack-home.ts';
import { toActor } from './slack-inbound.ts';

/** How many runs the Home tab lists. */
export const HOME_RUNS = 10;
/** People whose Home this process keeps fresh at most (the oldest is forgotten first). */
const VIEWERS_MAX = 1_000;

/** Publishes people's Home views. */
export class HomeTab {
  /** People who opened their Home here, oldest first, with the runs (by id) the view they saw listed. */
  private readonly viewers = new Map<string, Set<string>>();

  constructor(
    private readonly client: WebClient,
    private readonly handler: InboundHandler,
    private readonly options: { dashboardUrl?: string },
  ) {}

  /** Reads the person's runs, preference and workflows, and publishes their view. */
  async publish(userId: string): Promise<void> {
    const actor = toActor({ id: userId });
    const [runs, preference, workflows] = await Promise.all([
      this.handler.recentRuns(actor, HOME_RUNS),
      this.handler.reviewPreference(actor),
      this.handler.workflowsOf(actor),
    ]);
    const { dashboardUrl } = this.options;
    // Thread links cost a call each; with a dashboard, its run pages are the links.
    const threadLinks = dashboardUrl ? undefined : await permalinks(this.client, runs);
    const view = renderHome(runs, preference, workflows, { dashboardUrl, threadLinks });
    await this.client.views.publish({ user_id: userId, view });
    this.viewers.delete(userId);
    this.viewers.set(userId, new Set(runs.map((r) => r.id)));
    if (this.viewers.size > VIEWERS_MAX) this.viewers.delete(this.viewers.keys().next().value ?? '');
  }

  /** A run of someone whose Home view lists it ended (or started): their view is published again. */
  refreshFor(runId: string): Promise<void> | null {
    const user = [...this.viewers].find(([, runs]) => runs.has(runId))?.[0];
    return user ? this.publish(user) : null;
  }

  /** A new run of a person whose Home this process showed: their view gets it now, and its end later. */
  runStarted(runId: string, requester: Actor): Promise<void> | null {
    const listed = requester.channel === 'slack' ? this.viewers.get(requester.id) : undefined;
    if (!listed || listed.has(runId)) return null;
    return this.publish(requester.id);
  }
}

/** Publishes a person's Home each time they open its Home tab (the Messages tab is left alone). */
export function registerHome(app: App, home: HomeTab, track: (work: Promise<void>) => void): void {
  app.event('app_home_opened', async ({ event }) => {
    if (event.tab === 'home') track(home.publish(event.user));
  });
}

/**
 * Handles a choice in the Home view's review menu (after the ack): stores it, then publishes the view again so it
 * shows what is stored. False when the action is another one.
 */
export function onHomeAction(
  action: BlockElementAction,
  actor: Actor,
  deps: { handler: InboundHandler; track: (work: Promise<void>) => void; home: HomeTab },
): boolean {
  if (action.action_id !== HOME_REVIEW_ACTION) return false;
  const preference = toPreference(action.type === 'static_select' ? action.selected_option.value : undefined);
  if (preference)
    deps.track(deps.handler.setReviewPreference(actor, preference).then(() => deps.home.publish(actor.id)));
  return true;
}

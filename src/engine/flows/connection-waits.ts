/**
 * Runs of this process whose steps wait for their requester to connect a server that connects per person, or for an
 * approver to connect the workspace's connection to one (the thread is told so, and nobody is sent a link). The
 * requester is sent a private "Connect" link once per wait; a connection made anywhere (the callback of any process
 * signals it; the ownership watch looks again each round, in case a signal was missed) lets the steps go on, with no
 * new plan. A connection counts only when it is newer than the one the wait began with (a refused one stays refused).
 */
import type { PersonConnections, RunRecords, StoredRun } from '../ports.ts';
import { isApprover, sentence } from '../run/run-actions.ts';
import type { Log } from './deps.ts';
import type { RunDriver } from './run-driver.ts';
import type { RunMessages } from './run-messages.ts';

/** How long a connect link works; the words say so. */
export const LINK_MINUTES = 15;

interface Wait {
  run: StoredRun;
  /** The driver that asked last: the one a connection is signalled to (a run's driver can change while it waits). */
  driver: RunDriver;
  /** Per server: the connection the wait began with (null: none), the step that asked first, and when it asked. */
  servers: Map<string, { since: Date | null; stepId: string; askedAt: Date }>;
}

/** The waits of this process, by run. */
export class ConnectionWaits {
  private readonly waits = new Map<string, Wait>();

  constructor(
    private readonly deps: {
      connections: PersonConnections | undefined;
      store: Pick<RunRecords, 'appendEvent'>;
      clock: () => Date;
      log: Log;
      /** Who may connect a workspace server (an approver who asked is sent its link, as a requester theirs). */
      approvers?: readonly string[];
    },
    private readonly messages: RunMessages,
  ) {}

  /**
   * A step of the run waits for its requester to connect `server`: noted, and the requester asked privately. A run
   * that already waits for that server (its steps started while the plan was written, then went on under a driver of
   * their own) keeps its wait and its link: the newest driver hears of the connection, and nobody is asked twice.
   */
  async ask(run: StoredRun, driver: RunDriver, wait: { stepId: string; server: string }): Promise<void> {
    const { connections, clock, store } = this.deps;
    const since = connections ? await connections.connectedAt(wait.server, run.requester) : null;
    const entry: Wait = this.waits.get(run.id) ?? { run, driver, servers: new Map() };
    entry.driver = driver;
    const earlier = entry.servers.get(wait.server);
    const linkAlive = earlier !== undefined && clock().getTime() - earlier.askedAt.getTime() < LINK_MINUTES * 60_000;
    entry.servers.set(wait.server, earlier && linkAlive ? earlier : { since, stepId: wait.stepId, askedAt: clock() });
    this.waits.set(run.id, entry);
    await store.appendEvent(run.id, 'connectionNeeded', { stepId: wait.stepId, server: wait.server }, clock());
    if (linkAlive) return;
    if (connections?.workspaceServers().includes(wait.server)) {
      // The workspace's connection: only an approver may make it, so a link goes to the requester only if they are
      // one; the thread hears why it waits either way.
      const text = `${wait.stepId} runs on ${wait.server} as the workspace, whose connection to it is not there (or needs connecting again): an approver must connect it for the workspace (the connections command: connect ${wait.server}). The run waits meanwhile, and goes on once it is connected; stop it to give up.`;
      await this.messages.notice(run, 'warning', text);
      if (!isApprover(run.requester, this.deps.approvers ?? [])) return;
      const link = await connections.connectLink(wait.server, run.requester, run.id, clock(), run.conversation);
      if (!link) return;
      const yours = sentence`${run.requester}: you are an approver. Connect ${wait.server} for the workspace: ${link} (for you only; it works once, for ${String(LINK_MINUTES)} minutes). Every step on ${wait.server} then runs with the account you allow there.`;
      await this.messages.notice(run, 'info', yours, run.requester);
      return;
    }
    const link = connections
      ? await connections.connectLink(wait.server, run.requester, run.id, clock(), run.conversation)
      : null;
    const text = link
      ? sentence`${run.requester}: ${wait.stepId} runs on ${wait.server} as you, with your own account, and you have not connected it (or it needs connecting again). Connect ${wait.server}: ${link} (for you only; it works once, for ${String(LINK_MINUTES)} minutes). The run waits meanwhile; stop it to give up.`
      : sentence`${run.requester}: ${wait.stepId} runs on ${wait.server} as you, with your own account, and you have not connected it. Steward has no web address to connect from (its dashboard is off: STEWARD_DASHBOARD_PORT); the run waits. Stop it to give up.`;
    await this.messages.notice(run, 'info', text, run.requester);
  }

  /** Looks at every wait again: a newer connection lets its steps go on. Never throws. */
  async recheck(): Promise<void> {
    const { connections } = this.deps;
    if (!connections) return;
    for (const [runId, wait] of [...this.waits]) {
      if (wait.driver.current.phase === 'done') {
        this.waits.delete(runId);
        continue;
      }
      for (const [server, { since }] of [...wait.servers]) {
        const now = await connections.connectedAt(server, wait.run.requester).catch((err: unknown) => {
          this.deps.log(
            'warn',
            `run ${runId}: could not look at the connection to ${server}: ${(err as Error).message}`,
          );
          return null;
        });
        if (now === null || (since !== null && now.getTime() <= since.getTime())) continue;
        wait.servers.delete(server);
        this.deps.log('info', `run ${runId}: its requester connected ${server}; the waiting steps go on`);
        await this.deps.store
          .appendEvent(runId, 'connected', { server }, this.deps.clock())
          .catch((err: unknown) => this.deps.log('warn', `run ${runId}: ${(err as Error).message}`));
        wait.driver.send({ type: 'connected', server });
      }
      if (wait.servers.size === 0) this.waits.delete(runId);
    }
  }

  /** The run ended or went to another process: nothing waits here any more. */
  forget(runId: string): void {
    this.waits.delete(runId);
  }
}

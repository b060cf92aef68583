/**
 * Builds the Bolt app: Socket Mode when an app-level token is given (no public URL needed), otherwise HTTP on
 * a port, where Bolt refuses requests whose signature is wrong or older than five minutes (401).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { App, LogLevel, type Logger } from '@slack/bolt';

/** How to reach Slack. */
export interface SlackSettings {
  /** Bot token (`xoxb-…`). */
  botToken: string;
  /** App-level token (`xapp-…`, scope connections:write): Socket Mode. */
  appToken?: string;
  /** Signing secret: required for HTTP mode. */
  signingSecret?: string;
  /** HTTP mode's port (0 picks a free one). */
  port?: number;
  /** Web API base URL, for proxies and tests (default https://slack.com/api/). */
  apiUrl?: string;
}

/** A Bolt app and how to start and stop it. */
export interface SlackApp {
  app: App;
  mode: 'socket' | 'http';
  /** Checks the bot token (auth.test) and starts receiving; returns the HTTP port in HTTP mode. */
  start(): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** Creates the Bolt app for the given settings; nothing is contacted until `start`. */
export function createSlackApp(
  settings: SlackSettings,
  log: (level: 'info' | 'warn' | 'error', message: string) => void,
): SlackApp {
  const clientOptions = {
    // WebClient appends the method name to this URL, so it must end with a slash.
    slackApiUrl: settings.apiUrl ? settings.apiUrl.replace(/\/?$/, '/') : undefined,
    // A 429 is thrown at once (WebAPIRateLimitedError with retryAfter) instead of pausing every call of the client
    // for its Retry-After; the outbox (slack-outbox.ts) holds only the lane it concerns. Network errors and 5xx are
    // still retried here, a little.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 2, factor: 2, minTimeout: 500 },
    timeout: 15_000,
  };
  const common = {
    token: settings.botToken,
    clientOptions,
    logger: boltLogger(log),
    // auth.test runs in init(), awaited by start(), so a bad token fails start-up with a clear error.
    deferInitialization: true,
  };
  if (settings.appToken) {
    // Bolt hands installerOptions.clientOptions to the Socket Mode client, so apps.connections.open also goes to
    // SLACK_API_URL (a fresh object: that client adds its own retry settings to it).
    const socketClientOptions = clientOptions.slackApiUrl ? { slackApiUrl: clientOptions.slackApiUrl } : {};
    const app = new App({
      ...common,
      appToken: settings.appToken,
      socketMode: true,
      installerOptions: { clientOptions: socketClientOptions },
    });
    return {
      app,
      mode: 'socket',
      async start() {
        await app.init();
        await app.start();
        return undefined;
      },
      async stop() {
        await app.stop();
      },
    };
  }
  if (!settings.signingSecret)
    throw new Error('Slack HTTP mode needs SLACK_SIGNING_SECRET (or set SLACK_APP_TOKEN for Socket Mode).');
  // Events are answered when their listener returns, which for a message is once the engine stored it: a process
  // killed before that leaves Slack unanswered, and Slack delivers the event again (to any process).
  const app = new App({ ...common, signingSecret: settings.signingSecret, processBeforeResponse: true });
  return {
    app,
    mode: 'http',
    async start() {
      await app.init();
      const server = (await app.start(settings.port ?? 3000)) as Server;
      return (server.address() as AddressInfo).port;
    },
    async stop() {
      await app.stop();
    },
  };
}

/** Bolt's logger interface over Steward's log; Bolt's debug and info chatter is dropped. */
function boltLogger(log: (level: 'info' | 'warn' | 'error', message: string) => void): Logger {
  let level = LogLevel.WARN;
  const text = (msg: unknown[]) => msg.map((m) => (m instanceof Error ? m.message : String(m))).join(' ');
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...msg: unknown[]) => log('warn', `slack: ${text(msg)}`),
    error: (...msg: unknown[]) => log('error', `slack: ${text(msg)}`),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}

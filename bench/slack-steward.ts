/**
 * The Steward side of the Slack benchmarks: the neutral wiring of bench-steward.ts with the real SlackChannel in
 * HTTP mode (Bolt verifies every signature); the peers are told where to send their signed requests.
 */
import { SlackChannel } from '../src/bot/slack/slack-channel.ts';
import type { StewardSettings } from '../src/engine/flows/steward.ts';
import { startBenchSteward, type BenchSteward, type StewardHooks } from './bench-steward.ts';
import type { SlackPeers } from './slack-peers.ts';

export { PRODUCTION_SETTINGS, PoolStats, planText, type LogTally, type StewardHooks } from './bench-steward.ts';

/** A running Steward on Slack, with its pool for sampling. */
export type SlackSteward = BenchSteward<SlackChannel>;

const SECRET = 'bench-signing-secret-0123456789';

/** Starts Steward on Slack against the peers' fake LLM and Slack; the peers are told where to send. */
export async function startSlackSteward(o: {
  peers: SlackPeers;
  auditLog: string;
  hooks: StewardHooks;
  settings?: Partial<StewardSettings>;
  poolMax?: number;
}): Promise<SlackSteward> {
  const app = await startBenchSteward({
    ...o,
    llmBaseURL: o.peers.llmBaseURL,
    channel: (log) =>
      new SlackChannel({
        botToken: o.peers.botToken,
        signingSecret: SECRET,
        port: 0,
        apiUrl: o.peers.slackApiUrl,
        log,
      }),
  });
  try {
    await o.peers.target(`http://127.0.0.1:${app.channel.port}/slack/events`, SECRET);
  } catch (err) {
    await app.close();
    throw err;
  }
  return app;
}

/** The Discord rows of sections 5 and 6: tables parallel to the Slack ones, with the same columns where they exist. */
import { DEFAULT_MAX_PARALLEL } from '../src/config.ts';
import { pressRow, type DuplicateResult, type PressAcks } from './button-acks.ts';
import { benchDiscord, type DiscordLevelRow } from './discord-load.ts';
import { header, row } from './stats.ts';

import { f1, f2, kb, loadCells, mark, s } from './concurrency-report.ts';

/** How many calls of a kind a level made: `METHOD` and a route ending. */
function callsTo(l: DiscordLevelRow, method: string, routeEnd: string): number {
  return Object.entries(l.restCalls)
    .filter(([k]) => k.startsWith(`${method} `) && k.endsWith(routeEnd))
    .reduce((a, [, v]) => a + v, 0);
}

/** Section 5's Discord Markdown. */
export function renderDiscordConcurrency(
  levels: DiscordLevelRow[],
  base: { runMs: number; engineMs: number },
  o: { poolMax: number },
): string[] {
  const notDone = (l: DiscordLevelRow) => l.n - (l.statuses['completed'] ?? 0);
  const top = [...levels].sort((a, b) => b.n - a.n)[0];
  return [
    '## 5 and 6 on Discord',
    '',
    '### Concurrent runs through the Discord adapter',
    '',
    `The same load through the real \`DiscordChannel\` (discord.js gateway and REST) against the local fake Discord: N mentions dispatched at once on the gateway, ` +
      `each from its own member, each run in the thread Steward starts on its message; same plan, fake LLM (in the peers' process) and production defaults ` +
      `(maxParallel ${DEFAULT_MAX_PARALLEL}, a pool of ${o.poolMax} connections). One run alone: mention → report ${s(base.runMs)} s, mention → run ended ${s(base.engineMs)} s (median). ` +
      'The fake Discord answers at once, never runs a rate-limit bucket dry and sends no 429s; discord.js still sends one request at a time per route and channel ' +
      '(so the thread starts on the one parent channel queue) and at most 50 a second across the bot, and each card is edited at most once a second. ' +
      "The fake runs in Steward's process, so event-loop delay and heap include its work and its record of every call and message.",
    '',
    ...header([
      'runs at once',
      'completed',
      'wall s',
      'runs/s',
      'mention → report p50 / p99 s',
      '× one run',
      'mention → run ended p50 / p99 s',
      '× one run',
      'event-loop delay p50 / p99 / max ms',
      'heap per run in flight, KB (at n in flight)',
      'heap kept per finished run, KB',
    ]),
    ...levels.map((l) => row([l.n, ...loadCells(l, base)])),
    '',
    ...header([
      'runs at once',
      'cards posted',
      'cards in their final state',
      'all final, s after the last report',
      'report after the run ended (database) p50 / p99 s',
      'of which in the Discord channel p50 / p99 s',
      'SQL statements per run',
      `pool checkouts that queued (all ${o.poolMax} busy)`,
      'wait for a pooled connection p50 / p99 / max ms',
    ]),
    ...levels.map((l) =>
      row([
        l.n,
        `${l.cardsPosted} of ${l.n}`,
        `${l.cardsFinal} of ${l.cardsPosted}${l.finalComplete ? '' : ' (timed out)'}`,
        f1(l.finalAfterS),
        `${s(l.reportAfterEndP50Ms)} / ${s(l.reportAfterEndP99Ms)}`,
        `${s(l.reportInChannelP50Ms)} / ${s(l.reportInChannelP99Ms)}`,
        f1(l.statements / l.n),
        `${l.poolQueued} of ${l.poolCheckouts}`,
        `${f2(l.poolWaitP50Ms)} / ${f1(l.poolWaitP99Ms)} / ${f1(l.poolWaitMaxMs)}`,
      ]),
    ),
    '',
    ...header([
      'runs at once',
      'threads started',
      'messages posted / edited',
      '429s',
      'card updates given up',
      'cards never posted',
      'reports delivered',
      'runs not completed (database status)',
    ]),
    ...levels.map((l) =>
      row([
        l.n,
        callsTo(l, 'POST', '/threads'),
        `${callsTo(l, 'POST', '/channels/:channel/messages')} / ${callsTo(l, 'PATCH', '/messages/:message')}`,
        l.rateLimited,
        l.cardUpdatesFailed,
        l.cardsNotPosted,
        `${l.reportsDelivered} of ${l.n}`,
        notDone(l) === 0
          ? '0'
          : `${notDone(l)} (${Object.entries(l.statuses)
              .filter(([k]) => k !== 'completed')
              .map(([k, v]) => `${v} ${k}`)
              .join(', ')})`,
      ]),
    ),
    '',
    top
      ? `Targets at ${top.n} runs on Discord${top.n < 1000 ? ' (quick profile; --full goes to 1,000)' : ''}: ` +
        `event-loop delay p99 < 100 ms: ${f1(top.eldP99Ms)} ms ${mark(top.eldP99Ms < 100)}; ` +
        `memory per run < 50 KB: ${kb(top.heapPerRunBytes)} KB in flight ${mark(top.heapPerRunBytes < 50 * 1024)} (fake Discord's records included), ${kb(top.retainedPerRunBytes)} KB kept after the run.`
      : '',
  ];
}

/** Section 6's Discord Markdown. */
export function renderDiscordButtons(
  idle: PressAcks,
  saturated: { when: string; acks: PressAcks }[],
  d: DuplicateResult,
): string[] {
  const line = pressRow;
  const p99 = Math.max(...saturated.map((x) => x.acks.p99Ms));
  const dupRuns = d.runsFromMention - 1;
  return [
    '### Button press → interaction callback on Discord',
    '',
    'A bystander presses Pause on the probe card every 50 ms: each press is a new INTERACTION_CREATE dispatched on the gateway; ' +
      "the adapter answers with a deferred update, then the engine refuses the press and tells the presser in an ephemeral follow-up. ms from the dispatch to the fake Discord's answer to the callback (Discord's deadline is 3 s).",
    '',
    ...header(['when', 'presses', 'p50 ms', 'p99 ms', 'max ms', 'not 2xx', 'set aside (forced GC)']),
    line('idle (one live run)', idle),
    ...saturated.map((x) => line(x.when, x.acks)),
    '',
    `Replays: one MESSAGE_CREATE delivered ${d.mentionDeliveries} times (twice at once, then again after the run ended) → ${d.runsFromMention} run; ` +
      `the same Approve interaction twice at once → ${d.approvesAccepted} accepted, ${d.approvesRefused} refused, the note written ${d.noteCalls} time(s); ` +
      `the same Stop interaction twice at once → ${d.stopsAccepted} accepted, ${d.stopsRefused} refused.`,
    `Targets: callback p99 < 100 ms at saturation: ${Number.isFinite(p99) ? `${p99.toFixed(1)} ms ${p99 < 100 ? '✔' : '✘ missed'}` : 'not measured'}; ` +
      `zero duplicate runs: ${dupRuns} ${dupRuns === 0 && d.noteCalls === 1 && d.approvesAccepted === 1 && d.stopsAccepted === 1 ? '✔' : '✘ missed'}.`,
  ];
}

/** Runs the Discord rows of sections 5 and 6; returns their Markdown and raw rows. */
export async function benchDiscordSections(
  profile: 'quick' | 'full',
): Promise<{ markdown: string[]; rows: Record<string, unknown>[] }> {
  const r = await benchDiscord(profile);
  return {
    markdown: [
      ...renderDiscordConcurrency(r.levels, r.base, { poolMax: r.poolMax }),
      '',
      ...renderDiscordButtons(r.idle, r.saturated, r.dups),
    ],
    rows: r.rows,
  };
}

/** Section 5's tables: one row per load level, and the targets beside them. */
import { DEFAULT_MAX_PARALLEL } from '../src/config.ts';
import type { PressAcks } from './button-acks.ts';
import type { SlackStats } from './slack-peers.ts';
import { SLACK_RATE_LIMITS } from '../test/fakes/fake-slack-server.ts';
import { header, row } from './stats.ts';

/** What one load level measured. */
export interface LevelRow {
  n: number;
  limits: boolean;
  /** All runs in one channel (threads of it), instead of one channel each. */
  oneChannel: boolean;
  /** Every run settled before the level's timeout. */
  complete: boolean;
  wallS: number;
  runsPerS: number;
  runP50Ms: number;
  runP99Ms: number;
  engineP50Ms: number;
  engineP99Ms: number;
  cardP50Ms: number;
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
  heapPerRunBytes: number;
  inFlightAtHeap: number;
  retainedPerRunBytes: number;
  gcWindows: [number, number][];
  maxPoolWaiting: number;
  poolCheckouts: number;
  /** Checkouts that found every connection busy with the pool at its cap, and queued. */
  poolQueued: number;
  /** The pool's size in this level. */
  poolMax: number;
  /** How long a store operation waited for a pooled connection (`pool.connect()`), over every checkout. */
  poolWaitP50Ms: number;
  poolWaitP99Ms: number;
  poolWaitMaxMs: number;
  mentionAckP50Ms: number;
  mentionAckP99Ms: number;
  mentionAckMaxMs: number;
  mentionAcksOver3s: number;
  statuses: Record<string, number>;
  reportsDelivered: number;
  cardsNotPosted: number;
  /** Cards in the level's channels, and those showing a final state once the outbox drained. */
  cardsPosted: number;
  cardsFinal: number;
  finalComplete: boolean;
  /** Seconds from the last report to every card showing its final state. */
  finalAfterS: number;
  /** Report delivered (Slack took it) after the run's end was committed. */
  reportAfterEndP50Ms: number;
  reportAfterEndP99Ms: number;
  /** Of which in the Slack channel: the report handed to it → Slack took it. */
  reportInChannelP50Ms: number;
  reportInChannelP99Ms: number;
  /** Runs started in quiet channels beside the busy one (0 for other levels). */
  quietRuns: number;
  /** A plan card's post (handed to the channel → Slack took it) for runs alone in their channel. */
  aloneCardWaitP50Ms: number;
  aloneCardWaitMaxMs: number;
  slackCalls: Record<string, number>;
  rateLimited: Record<string, number>;
  cardTitles: Record<string, number>;
  cardUpdatesFailed: number;
  retries: SlackStats['retries'];
  /** SQL statements sent in the level (BEGIN and COMMIT included). */
  statements: number;
  errors: string[];
  errorCount: number;
  stepCalls: number;
  presses: PressAcks | undefined;
}

/** Number formats shared by the concurrency tables of every platform. */
export const s = (ms: number) => (ms / 1000).toFixed(2);
export const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
export const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '—');
export const kb = (bytes: number) => (Number.isFinite(bytes) ? (bytes / 1024).toFixed(1) : '—');
export const mark = (ok: boolean) => (ok ? '✔' : '✘ missed');

/** What a load level measured, whatever the platform: the cells from "completed" to "heap kept per finished run". */
export interface LoadFigures {
  n: number;
  statuses: Record<string, number>;
  complete: boolean;
  wallS: number;
  runsPerS: number;
  runP50Ms: number;
  runP99Ms: number;
  engineP50Ms: number;
  engineP99Ms: number;
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
  heapPerRunBytes: number;
  inFlightAtHeap: number;
  retainedPerRunBytes: number;
}

/** A level's load cells, against one run alone (`base`). */
export function loadCells(l: LoadFigures, base: { runMs: number; engineMs: number }): string[] {
  return [
    `${l.statuses['completed'] ?? 0}${l.complete ? '' : ' (timed out)'}`,
    f1(l.wallS),
    f1(l.runsPerS),
    `${s(l.runP50Ms)} / ${s(l.runP99Ms)}`,
    `${(l.runP50Ms / base.runMs).toFixed(1)}×`,
    `${s(l.engineP50Ms)} / ${s(l.engineP99Ms)}`,
    `${(l.engineP50Ms / base.engineMs).toFixed(1)}×`,
    `${f1(l.eldP50Ms)} / ${f1(l.eldP99Ms)} / ${f1(l.eldMaxMs)}`,
    l.n >= 100 ? `${kb(l.heapPerRunBytes)} (${l.inFlightAtHeap})` : '—',
    l.n >= 100 ? kb(l.retainedPerRunBytes) : '—',
  ];
}

const label = (l: LevelRow) => `${l.n}${l.oneChannel ? ' in one channel' : ''}`;

/** Section 5's Markdown. */
export function renderConcurrency(
  levels: LevelRow[],
  base: { runMs: number; engineMs: number },
  o: { gcExposed: boolean; poolMax: number },
): string[] {
  const limits = Object.entries(SLACK_RATE_LIMITS)
    .map(([m, l]) => `\`${m}\` ${l.perMinute}/min per ${l.per}, burst ${l.burst}`)
    .join('; ');
  const top = [...levels].filter((l) => l.limits && !l.oneChannel).sort((a, b) => b.n - a.n)[0];
  const notDone = (l: LevelRow) => l.n - (l.statuses['completed'] ?? 0);
  const retried = (l: LevelRow) =>
    l.retries.retried === 0
      ? '—'
      : `${l.retries.retried} of ${l.retries.refused}, ${f1(l.retries.medianGapMs / 1000)} s later (min margin ${f1(l.retries.minMarginMs)} ms)`;
  return [
    '## 5. Concurrent runs in one process',
    '',
    `N runs started at once by signed mentions, each in its own channel (or all in one) and from its own requester; plan: two 100 ms \`audit.sleep\` side by side, ` +
      `then a 50 ms one (low risk, so no review); fake LLM answering at once; Steward's production defaults (maxParallel ${DEFAULT_MAX_PARALLEL}, a pool of ${o.poolMax} PostgreSQL connections). ` +
      `One run alone: mention → report ${s(base.runMs)} s, mention → run ended ${s(base.engineMs)} s (median). ` +
      `Fake Slack limits: ${limits}, answering 429 with Retry-After. Steward's outbox paces each lane (method and channel, or method per workspace) at the same published rates; ` +
      "the report does not wait for the card's final update, which goes first in the update lane.",
    '',
    ...header([
      'runs at once',
      'Slack limits',
      'cards posted',
      'cards in their final state',
      'all final, s after the last report',
      'report after the run ended (database) p50 / p99 s',
      'of which in the Slack channel p50 / p99 s',
      'card post in a channel of its own p50 / max s',
    ]),
    ...levels.map((l) =>
      row([
        label(l),
        l.limits ? 'on' : 'off',
        `${l.cardsPosted} of ${l.n}`,
        `${l.cardsFinal} of ${l.cardsPosted}${l.finalComplete ? '' : ' (timed out)'}`,
        f1(l.finalAfterS),
        `${s(l.reportAfterEndP50Ms)} / ${s(l.reportAfterEndP99Ms)}`,
        `${s(l.reportInChannelP50Ms)} / ${s(l.reportInChannelP99Ms)}`,
        `${s(l.aloneCardWaitP50Ms)} / ${s(l.aloneCardWaitMaxMs)}${l.quietRuns > 0 ? ` (${l.quietRuns} quiet channels)` : ''}`,
      ]),
    ),
    '',
    ...header([
      'runs at once',
      'Slack limits',
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
    ...levels.map((l) => row([label(l), l.limits ? 'on' : 'off', ...loadCells(l, base)])),
    '',
    ...header([
      'runs at once',
      'Slack limits',
      'SQL statements per run',
      `pool checkouts that queued (all ${o.poolMax} busy)`,
      'wait for a pooled connection p50 / p99 / max ms',
      'most queued at once',
      'mention ack p50 / p99 / max ms',
    ]),
    ...levels.map((l) =>
      row([
        label(l),
        l.limits ? 'on' : 'off',
        f1(l.statements / l.n),
        `${l.poolQueued} of ${l.poolCheckouts}`,
        `${f2(l.poolWaitP50Ms)} / ${f1(l.poolWaitP99Ms)} / ${f1(l.poolWaitMaxMs)}`,
        l.maxPoolWaiting,
        `${f1(l.mentionAckP50Ms)} / ${f1(l.mentionAckP99Ms)} / ${f1(l.mentionAckMaxMs)}`,
      ]),
    ),
    '',
    ...header([
      'runs at once',
      'Slack limits',
      'posts / updates sent',
      '429s post / update',
      '429s sent again (median gap; gap − Retry-After, min)',
      'card updates given up',
      'cards never posted',
      'reports delivered',
      'runs not completed (database status)',
    ]),
    ...levels.map((l) =>
      row([
        label(l),
        l.limits ? 'on' : 'off',
        `${l.slackCalls['chat.postMessage'] ?? 0} / ${l.slackCalls['chat.update'] ?? 0}`,
        `${l.rateLimited['chat.postMessage'] ?? 0} / ${l.rateLimited['chat.update'] ?? 0}`,
        retried(l),
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
    `Heap figures are after a forced full GC (${o.gcExposed ? 'node --expose-gc' : 'exposed at run time with v8.setFlagsFromString'}), baseline taken just before each level, after a warm-up level; ` +
      "they include the bench's own per-run bookkeeping (about 0.3 KB), and below 100 runs both are within GC noise (not shown). " +
      'SQL statements include those of the section 6 presses in the level where they run. ' +
      "The wait for a pooled connection is how long each store operation's `pool.connect()` took, over every checkout in the level (opening a new connection included). " +
      'Event-loop delay is how late a 5 ms interval timer fires, the forced GCs left out. ' +
      "Posts and 429s count the level's own channels; updates and their 429s are per workspace. " +
      'Slack counts are taken once every card shows its final state. ' +
      "A card's post in a channel of its own is the time from Steward handing the card to the channel to Slack's answer: " +
      "in the busy-channel level, for runs started in quiet channels while the busy channel's lane was full, so it is the worst cross-channel stall.",
    ...levels
      .filter((l) => l.mentionAcksOver3s > 0)
      .map(
        (l) =>
          `At ${label(l)} runs (limits ${l.limits ? 'on' : 'off'}) ${l.mentionAcksOver3s} of ${l.n} mentions ` +
          "were acknowledged after Slack's 3 s deadline (Slack would deliver them again; the event-id check drops the copies).",
      ),
    top
      ? `Targets at ${top.n} runs (Slack limits on)${top.n < 1000 ? ' — the quick profile stops short of 1,000; run --full for that' : ''}: ` +
        `event-loop delay p99 < 100 ms: ${f1(top.eldP99Ms)} ms ${mark(top.eldP99Ms < 100)}; ` +
        `memory per run < 50 KB: ${kb(top.heapPerRunBytes)} KB in flight ${mark(top.heapPerRunBytes < 50 * 1024)}, ${kb(top.retainedPerRunBytes)} KB kept after the run.`
      : '',
  ];
}

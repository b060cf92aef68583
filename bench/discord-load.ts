/**
 * Sections 5 and 6 through the Discord adapter: N runs at once started by mentions on the gateway (each in its own
 * thread), a bystander pressing Pause on a live card every 50 ms (idle and during the largest level), and replays
 * (the same MESSAGE_CREATE delivered again, the same Approve and Stop interactions twice at once). The real
 * DiscordChannel (discord.js gateway and REST) talks to the local fake Discord; acknowledgements are measured at the
 * fake, from the dispatch of an INTERACTION_CREATE to the fake answering its callback (`tick`).
 *
 * The fake Discord lives in Steward's process (its gateway is a WebSocket server discord.js connects to), so the
 * event-loop and heap figures include the fake's own work and its record of every call and message; the fake LLM
 * runs in the Slack peers' process, as in the Slack rows. The level machinery (run tracker, sampler, load plan,
 * settings, stats) is the Slack rows'.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIUser } from 'discord.js';
import { DiscordChannel } from '../src/bot/discord/discord-channel.ts';
import { parseCustomId } from '../src/bot/discord/discord-actions.ts';
import { startFakeDiscord, type FakeDiscord, type StoredMessage } from '../test/fakes/fake-discord-server.ts';
import { startBenchSteward, planText, type BenchSteward } from './bench-steward.ts';
import { summarizeAcks, type DuplicateResult, type PressAcks } from './button-acks.ts';
import {
  countCalls,
  FINAL_TITLES,
  LOAD_PLAN,
  LOAD_REPORT,
  PRESS_EVERY_MS,
  PROBE_PLAN,
  settingsFor,
  until,
} from './concurrency.ts';
import { heapAfterGc, runFigures, RunTracker, startSampling } from './run-tracker.ts';
import { epochNow, startSlackPeers, type SlackPeers } from './slack-peers.ts';
import { median } from './stats.ts';

/** What one Discord load level measured (the Slack `LevelRow`'s figures that exist on Discord). */
export interface DiscordLevelRow {
  n: number;
  complete: boolean;
  wallS: number;
  runsPerS: number;
  runP50Ms: number;
  runP99Ms: number;
  engineP50Ms: number;
  engineP99Ms: number;
  cardP50Ms: number;
  reportAfterEndP50Ms: number;
  reportAfterEndP99Ms: number;
  reportInChannelP50Ms: number;
  reportInChannelP99Ms: number;
  cardsPosted: number;
  cardsFinal: number;
  finalComplete: boolean;
  finalAfterS: number;
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
  heapPerRunBytes: number;
  inFlightAtHeap: number;
  retainedPerRunBytes: number;
  maxPoolWaiting: number;
  poolCheckouts: number;
  poolQueued: number;
  poolWaitP50Ms: number;
  poolWaitP99Ms: number;
  poolWaitMaxMs: number;
  statements: number;
  statuses: Record<string, number>;
  reportsDelivered: number;
  cardsNotPosted: number;
  /** REST calls on the level's threads (and the thread creations on the parent channel), by `METHOD route`. */
  restCalls: Record<string, number>;
  rateLimited: number;
  cardUpdatesFailed: number;
  errorCount: number;
  errors: string[];
  stepCalls: number;
  presses: PressAcks | undefined;
}

/** Everything a Discord level needs. */
interface DiscordLoad {
  discord: FakeDiscord;
  peers: SlackPeers;
  app: BenchSteward<DiscordChannel>;
  tracker: RunTracker;
  /** Thread (= request message) id → the name the tracker files it under. */
  names: Map<string, string>;
  auditLog: string;
  bob: APIUser;
  probe: { requester: APIUser; thread: string };
  pressing: { timer: NodeJS.Timeout; sent: { id: string; sentAt: number }[] } | null;
}

const PROBE = 'D0PROBE';
const CALLBACK = '/interactions/:interaction/:token/callback';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the Discord rows of sections 5 and 6; returns the rows for the report and the raw rows. */
export async function benchDiscord(profile: 'quick' | 'full'): Promise<{
  singles: DiscordLevelRow[];
  base: { runMs: number; engineMs: number };
  levels: DiscordLevelRow[];
  idle: PressAcks;
  saturated: { when: string; acks: PressAcks }[];
  dups: DuplicateResult;
  poolMax: number;
  rows: Record<string, unknown>[];
}> {
  const s = settingsFor(profile);
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-discord-'));
  const auditLog = join(dir, 'audit.jsonl');
  const peers = await startSlackPeers({ rateLimits: false });
  const discord = await startFakeDiscord({ allowMessageContent: true });
  const names = new Map<string, string>();
  const tracker = new RunTracker((key) => names.get(key.split(':')[1] ?? '') ?? key);
  let app: BenchSteward<DiscordChannel> | undefined;
  try {
    app = await startBenchSteward({
      llmBaseURL: peers.llmBaseURL,
      auditLog,
      hooks: tracker.hooks,
      poolMax: s.poolMax,
      channel: (log) =>
        new DiscordChannel({
          token: discord.token,
          apiUrl: discord.apiUrl,
          guildId: discord.guildId,
          messageContent: true,
          log,
        }),
    });
    const c: DiscordLoad = {
      discord,
      peers,
      app,
      tracker,
      names,
      auditLog,
      bob: discord.user({ username: 'bob' }),
      probe: { requester: discord.user({ username: 'probe' }), thread: '' },
      pressing: null,
    };
    await startProbe(c);
    await runLevel(c, 30, 'WARM', { timeoutMs: 60_000 });
    const singles: DiscordLevelRow[] = [];
    for (let i = 0; i < s.singles; i++) singles.push(await runLevel(c, 1, `ONE${i}`, { timeoutMs: 30_000 }));
    const base = {
      runMs: median(singles.slice(1).map((r) => r.runP50Ms)),
      engineMs: median(singles.slice(1).map((r) => r.engineP50Ms)),
    };
    startPressing(c);
    await sleep(s.idlePresses * PRESS_EVERY_MS);
    const idle = await stopPressing(c, []);
    const levels: DiscordLevelRow[] = [];
    const saturated: { when: string; acks: PressAcks }[] = [];
    const largest = Math.max(...s.levels);
    for (const n of s.levels) {
      const row = await runLevel(c, n, `N${n}`, { timeoutMs: s.timeoutMs, press: n === largest });
      levels.push(row);
      if (row.presses) saturated.push({ when: `during ${n} runs of section 5 on Discord`, acks: row.presses });
    }
    const dups = await duplicates(c);
    const rows: Record<string, unknown>[] = [
      ...singles.map((r) => ({ section: 'concurrency', platform: 'discord', single: true, ...r })),
      ...levels.map((r) => ({ section: 'concurrency', platform: 'discord', ...r, base })),
      { section: 'button-ack', platform: 'discord', when: 'idle', ...idle },
      ...saturated.map((x) => ({ section: 'button-ack', platform: 'discord', when: x.when, ...x.acks })),
      { section: 'duplicates', platform: 'discord', ...dups },
    ];
    return { singles, base, levels, idle, saturated, dups, poolMax: app.poolMax, rows };
  } finally {
    await app?.close();
    await discord.close();
    await peers.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Mentions Steward in the server's text channel as `author`, the thread filed under `name`; returns the thread id. */
function mention(c: DiscordLoad, name: string, author: APIUser | undefined, text: string): string {
  const message = c.discord.messageCreate({ content: text, mentionsBot: true, author });
  c.names.set(message.id, name);
  c.discord.dispatch('MESSAGE_CREATE', message);
  return message.id;
}

const fromBot = (c: DiscordLoad, m: StoredMessage) => m.message.author.id === c.discord.botUser.id && !m.ephemeral;
const isCard = (m: StoredMessage) => (m.message.embeds ?? []).length > 0;

/** The run card in a thread: Steward's first message there with an embed. */
function cardIn(c: DiscordLoad, thread: string): StoredMessage | undefined {
  return c.discord.messagesIn(thread).find((m) => fromBot(c, m) && isCard(m));
}

/** The custom id of the `kind` button on a message as it stands now. */
function buttonOn(m: StoredMessage, kind: string): string | undefined {
  const rows = (m.message.components ?? []) as { components?: { custom_id?: string }[] }[];
  return rows
    .flatMap((r) => r.components ?? [])
    .map((x) => x.custom_id ?? '')
    .find((id) => parseCustomId(id)?.kind === kind);
}

/** A press of `kind` on the card in `thread` as `user`, as the gateway would send it. */
function pressPayload(
  c: DiscordLoad,
  thread: string,
  kind: string,
  user: APIUser,
): Record<string, unknown> | undefined {
  const card = cardIn(c, thread);
  const customId = card && buttonOn(card, kind);
  if (!card || !customId) return undefined;
  return c.discord.buttonPress({ messageId: card.message.id, customId, channelId: thread, user });
}

/** Starts the probe run (a long chain of sleeps) and waits until its card offers Pause. */
async function startProbe(c: DiscordLoad): Promise<void> {
  c.tracker.watch(PROBE);
  await c.peers.script(PROBE_PLAN, 'Probe stopped.');
  c.probe.thread = mention(c, PROBE, c.probe.requester, 'probe');
  if (!(await until(() => pressPayload(c, c.probe.thread, 'pause', c.bob) !== undefined, 30_000)))
    throw new Error('the Discord probe run did not start');
  await c.peers.script(LOAD_PLAN, LOAD_REPORT);
}

/** A bystander presses Pause on the probe card every 50 ms, each press a fresh interaction. */
function startPressing(c: DiscordLoad): void {
  const sent: { id: string; sentAt: number }[] = [];
  const timer = setInterval(() => {
    const payload = pressPayload(c, c.probe.thread, 'pause', c.bob);
    if (!payload) return;
    sent.push({ id: String(payload.id), sentAt: epochNow() });
    c.discord.dispatch('INTERACTION_CREATE', payload);
  }, PRESS_EVERY_MS);
  c.pressing = { timer, sent };
}

/** Stops pressing and times each press: dispatch → the fake's answer to its callback (`tick`, same process). */
async function stopPressing(c: DiscordLoad, gcWindows: [number, number][]): Promise<PressAcks> {
  const p = c.pressing;
  c.pressing = null;
  if (!p) return summarizeAcks([], gcWindows);
  clearInterval(p.timer);
  const ids = new Set(p.sent.map((x) => x.id));
  await until(() => p.sent.every((x) => c.discord.interaction(x.id)?.callbackType !== undefined), 10_000);
  const callbacks = new Map<string, { tick: number; status: number }>();
  for (const call of c.discord.calls)
    if (
      call.route === CALLBACK &&
      call.interactionId &&
      ids.has(call.interactionId) &&
      !callbacks.has(call.interactionId)
    )
      callbacks.set(call.interactionId, { tick: call.tick, status: call.status });
  return summarizeAcks(
    p.sent.map((x) => {
      const cb = callbacks.get(x.id);
      // A press never acknowledged counts as not 200, at the longest time Discord would wait (3 s).
      // A deferred update is answered 204; any 2xx is the acknowledgement Slack's 200 is.
      const status = cb && cb.status >= 200 && cb.status < 300 ? 200 : (cb?.status ?? 0);
      return cb
        ? { sentAt: x.sentAt, ackMs: performance.timeOrigin + cb.tick - x.sentAt, status }
        : { sentAt: x.sentAt, ackMs: 3000, status: 0 };
    }),
    gcWindows,
  );
}

/** Starts `n` runs at once, each from its own requester in its own thread (`D0<label>X0000`…), and measures them. */
async function runLevel(
  c: DiscordLoad,
  n: number,
  label: string,
  o: { timeoutMs: number; press?: boolean },
): Promise<DiscordLevelRow> {
  const prefix = `D0${label}X`;
  c.tracker.watch(prefix);
  const marks = { ...c.app.logs, first: c.app.logs.first.length };
  const callsBefore = c.discord.calls.length;
  c.app.poolStats.reset();
  const baseline = heapAfterGc();
  const sampler = startSampling({
    baseline,
    inFlight: () => c.tracker.inFlight(prefix),
    waiting: () => c.app.pool.waitingCount,
    now: epochNow,
  });
  if (o.press) startPressing(c);
  const threads = Array.from({ length: n }, (_, i) =>
    mention(c, `${prefix}${String(i).padStart(4, '0')}`, c.discord.user({ username: `l${i}` }), 'sleep three times'),
  );
  const complete = await until(() => c.tracker.settled(prefix) >= n, o.timeoutMs);
  const samples = sampler.stop();
  const presses = o.press ? await stopPressing(c, samples.gcWindows) : undefined;
  const reportedAt = performance.now();
  const final = await untilCardsFinal(c, threads, o.timeoutMs);
  const finalAfterS = (performance.now() - reportedAt) / 1000;
  await sleep(200);
  const retainedPerRun = (heapAfterGc() - baseline) / n;
  const runs = c.tracker.of(prefix);
  const keys = threads.map((t) => `${c.discord.guildId}:${t}`);
  const statuses = await c.app.db.db
    .selectFrom('runs')
    .select(['status'])
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('conversation_key', 'in', keys)
    .groupBy('status')
    .execute();
  const ours = new Set(threads);
  const restCalls: Record<string, number> = {};
  let rateLimited = 0;
  for (const call of c.discord.calls.slice(callsBefore)) {
    const ids = call.path.match(/\d{15,22}/g) ?? [];
    if (!ids.some((id) => ours.has(id))) continue;
    const k = `${call.method} ${call.route}`;
    restCalls[k] = (restCalls[k] ?? 0) + 1;
    if (call.status === 429) rateLimited += 1;
  }
  const timing = runFigures(runs);
  const pool = c.app.poolStats;
  const logs = c.app.logs;
  return {
    n,
    complete,
    ...timing,
    cardsPosted: final.posted,
    cardsFinal: final.final,
    finalComplete: final.ok,
    finalAfterS,
    eldP50Ms: samples.eldP50Ms,
    eldP99Ms: samples.eldP99Ms,
    eldMaxMs: samples.eldMaxMs,
    heapPerRunBytes: samples.heapPerRunBytes,
    inFlightAtHeap: samples.inFlightAtHeap,
    retainedPerRunBytes: retainedPerRun,
    maxPoolWaiting: samples.maxPoolWaiting,
    poolCheckouts: pool.checkouts,
    poolQueued: pool.queued,
    poolWaitP50Ms: pool.micros.percentile(50) / 1000,
    poolWaitP99Ms: pool.micros.percentile(99) / 1000,
    poolWaitMaxMs: pool.micros.max / 1000,
    statements: pool.statements,
    statuses: Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)])),
    reportsDelivered: runs.filter((r) => r.reportOk).length,
    cardsNotPosted: runs.filter((r) => r.cardOk === false).length,
    restCalls,
    rateLimited,
    cardUpdatesFailed: logs.cardUpdatesFailed - marks.cardUpdatesFailed,
    errorCount: logs.errors - marks.errors,
    errors: logs.first
      .slice(marks.first)
      .filter((l) => l.startsWith('error'))
      .slice(0, 5),
    stepCalls: countCalls(c.auditLog),
    presses,
  };
}

/** Waits until every card in the level's threads shows a final state in its heading (the embed's author line). */
async function untilCardsFinal(
  c: DiscordLoad,
  threads: string[],
  timeoutMs: number,
): Promise<{ ok: boolean; posted: number; final: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const cards = threads.flatMap((t) => {
      const card = cardIn(c, t);
      return card ? [card] : [];
    });
    const final = cards.filter((m) =>
      FINAL_TITLES.some((t) => m.message.embeds?.[0]?.author?.name.startsWith(t)),
    ).length;
    if (final >= cards.length || performance.now() > deadline)
      return { ok: final >= cards.length, posted: cards.length, final };
    await sleep(250);
  }
}

async function decisionsIn(c: DiscordLoad, thread: string, action: string): Promise<{ accepted: boolean }[]> {
  return c.app.db.db
    .selectFrom('decisions')
    .innerJoin('runs', 'runs.id', 'decisions.run_id')
    .select(['decisions.accepted'])
    .where('runs.conversation_key', '=', `${c.discord.guildId}:${thread}`)
    .where('decisions.action', '=', action)
    .execute();
}

/** Replays a mention, an Approve and a Stop as the gateway would redeliver them; counts runs and decisions. */
async function duplicates(c: DiscordLoad): Promise<DuplicateResult> {
  const { discord, tracker, app } = c;
  // The same MESSAGE_CREATE twice at once (as after a resume), then again once the run has ended.
  tracker.watch('D0DUPM');
  tracker.watch('D0DUPA');
  const message = discord.messageCreate({ content: 'sleep three times', mentionsBot: true });
  c.names.set(message.id, 'D0DUPM');
  discord.dispatch('MESSAGE_CREATE', message);
  discord.dispatch('MESSAGE_CREATE', message);
  if (!(await until(() => tracker.settled('D0DUPM') >= 1, 30_000))) throw new Error('the mentioned run did not end');
  discord.dispatch('MESSAGE_CREATE', message);
  await sleep(500);
  const runs = await app.db.db
    .selectFrom('runs')
    .select('id')
    .where('conversation_key', '=', `${discord.guildId}:${message.id}`)
    .execute();

  // A medium-risk plan waits for review; its requester's Approve interaction arrives twice at once.
  await c.peers.script(
    planText('Write one note', [{ id: 'n', tool: 'audit.note', args: { text: 'once' } }]),
    'Noted once.',
  );
  const requester = discord.user({ username: 'dupa' });
  const thread = mention(c, 'D0DUPA', requester, 'write a note');
  if (!(await until(() => pressPayload(c, thread, 'approve', requester) !== undefined, 30_000)))
    throw new Error('no review card');
  const approve = pressPayload(c, thread, 'approve', requester);
  discord.dispatch('INTERACTION_CREATE', approve);
  discord.dispatch('INTERACTION_CREATE', approve);
  if (!(await until(() => tracker.settled('D0DUPA') >= 1, 30_000))) throw new Error('the approved run did not end');
  const approved = await decisionsIn(c, thread, 'approve');
  const runId = tracker.of('D0DUPA')[0]?.runId ?? '';
  const noteCalls = (await app.store.listStepAttempts(runId)).filter(
    (a) => a.stepId === 'n' && a.status === 'succeeded',
  ).length;

  // The probe run's requester presses Stop, and the interaction arrives twice at once.
  const stop = pressPayload(c, c.probe.thread, 'stop', c.probe.requester);
  discord.dispatch('INTERACTION_CREATE', stop);
  discord.dispatch('INTERACTION_CREATE', stop);
  if (!(await until(() => tracker.settled(PROBE) >= 1, 60_000))) throw new Error('the probe run did not stop');
  const stops = await decisionsIn(c, c.probe.thread, 'stop');
  return {
    mentionDeliveries: 3,
    mentionStatuses: [],
    runsFromMention: runs.length,
    approvePresses: 2,
    approvesAccepted: approved.filter((d) => d.accepted).length,
    approvesRefused: approved.filter((d) => !d.accepted).length,
    noteCalls,
    stopPresses: 2,
    stopsAccepted: stops.filter((d) => d.accepted).length,
    stopsRefused: stops.filter((d) => !d.accepted).length,
  };
}

/**
 * Section 4, Pause and Stop broken down: one run at a time with four `audit.sleep` calls of 5 s in flight (stdio),
 * a signed button press sent to the real Bolt receiver, and the time from the press to each thing that follows:
 * the HTTP acknowledgement, the engine call, the state change committed in PostgreSQL, the abort signals, the
 * cancelled calls settled, the final state, the card updated at the fake Slack (rate limits on, buckets refilled
 * each round), and the report. Steps started after the press are counted from both the MCP calls and the step rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { header, quantile, row } from './stats.ts';
import { startSlackPeers, type CardCall, type SlackPeers } from './slack-peers.ts';
import { planText, startSlackSteward, type SlackSteward } from './slack-steward.ts';

const IN_FLIGHT = 4;
const SLEEP_MS = 5000;
/** The press comes 0–1.5 s after the calls start (spread evenly over the rounds), like a person reading the card. */
const PRESS_WITHIN_MS = 1500;
const pressDelay = (i: number) => ((i * 0.6180339887) % 1) * PRESS_WITHIN_MS;

/** What one round saw, in epoch ms. */
interface Round {
  kind: 'stop' | 'pause';
  pressAt: number | null;
  running: number;
  aborts: number[];
  settles: number[];
  callsAfterPress: number;
  /** Step rows written after the press (a step that never ran gets one too, with its end status). */
  rowsAfterPress: string[];
  commits: { to: string; at: number }[];
  inboundAt: number | null;
  reportAt: number | null;
}

const newRound = (kind: Round['kind']): Round => ({
  kind,
  pressAt: null,
  running: 0,
  aborts: [],
  settles: [],
  callsAfterPress: 0,
  rowsAfterPress: [],
  commits: [],
  inboundAt: null,
  reportAt: null,
});

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Rounds per kind: quick 12 Stop + 8 Pause; full 60 + 40 (BENCH_STOP_ROUNDS sets the Stop count). */
function roundsFor(profile: 'quick' | 'full'): { stop: number; pause: number } {
  const stop = Number(process.env['BENCH_STOP_ROUNDS'] ?? (profile === 'full' ? 60 : 12));
  return { stop, pause: Math.max(2, Math.round((stop * 2) / 3)) };
}

/** Measures Pause and Stop through Slack; returns Markdown lines and one raw row per round. */
export async function benchStopBreakdown(
  profile: 'quick' | 'full',
): Promise<{ markdown: string[]; rows: Record<string, unknown>[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-stop-'));
  const peers = await startSlackPeers({ rateLimits: true });
  let round = newRound('stop');
  let app: SlackSteward | undefined;
  try {
    app = await startSlackSteward({
      peers,
      auditLog: join(dir, 'audit.jsonl'),
      hooks: {
        toolCall: (_name, at) => {
          const r = round;
          if (r.pressAt !== null && at >= r.pressAt) r.callsAfterPress += 1;
          r.running += 1;
          return { aborted: (t) => void r.aborts.push(t), settled: (t) => void (r.settles.push(t), (r.running -= 1)) };
        },
        stepStarted: (_runId, stepId, at) =>
          void (round.pressAt !== null && at >= round.pressAt && round.rowsAfterPress.push(stepId)),
        committed: (_runId, to, at) => void round.commits.push({ to, at }),
        inbound: (kind, _key, at) => void (kind === 'decision' && round.inboundAt === null && (round.inboundAt = at)),
        notify: (_c, m, _sent, doneAt) => void (m.kind === 'report' && (round.reportAt = doneAt)),
      },
    });
    const steps = [
      ...Array.from({ length: IN_FLIGHT }, (_, i) => ({ id: `s${i}`, tool: 'audit.sleep', args: { ms: SLEEP_MS } })),
      {
        id: 'after',
        tool: 'audit.sleep',
        args: { ms: 1 },
        dependsOn: Array.from({ length: IN_FLIGHT }, (_, i) => `s${i}`),
      },
    ];
    await peers.script(planText('Sleep four times, then once more', steps), 'Stopped as asked.');
    const { stop, pause } = roundsFor(profile);
    // Interleaved, with a warm-up round of each first (not counted).
    const kinds: Round['kind'][] = [
      'stop',
      'pause',
      ...Array.from({ length: stop + pause }, (_, i) => (i % 5 < 3 ? 'stop' : 'pause')),
    ];
    const rows: Record<string, unknown>[] = [];
    for (const [i, kind] of kinds.entries()) {
      round = newRound(kind);
      const r = await playRound(peers, app, round, `C0STOP${String(i).padStart(4, '0')}`, pressDelay(i));
      if (i >= 2) rows.push(r);
    }
    return { markdown: render(rows), rows };
  } finally {
    await app?.close();
    await peers.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function playRound(
  peers: SlackPeers,
  app: SlackSteward,
  r: Round,
  channel: string,
  delayMs: number,
): Promise<Record<string, unknown>> {
  await peers.resetRateLimits();
  await peers.mentions([{ channel, user: 'U0ADA', text: 'sleep four times' }]);
  await until(`${IN_FLIGHT} calls in flight`, () => r.running === IN_FLIGHT);
  await new Promise((res) => setTimeout(res, delayMs));
  const press = await peers.press(channel, r.kind, 'U0ADA');
  r.pressAt = press.sentAt;
  const since = (to: string) => (r.commits.find((c) => c.to === to && c.at >= press.sentAt)?.at ?? NaN) - press.sentAt;
  const cardAt = async (titles: string[]) => {
    const calls: CardCall[] = await peers.cardCalls(channel, press.sentAt - 1);
    return (
      (calls.find((c) => c.method === 'chat.update' && c.status === 200 && titles.includes(c.title))?.at ?? NaN) -
      press.sentAt
    );
  };
  let out: Record<string, unknown>;
  if (r.kind === 'stop') {
    await until('the report', () => r.reportAt !== null);
    out = {
      committed: since('stopping'),
      abortFirst: Math.min(...r.aborts) - press.sentAt,
      abortLast: Math.max(...r.aborts) - press.sentAt,
      settled: Math.max(...r.settles) - press.sentAt,
      final: since('stopped'),
      card: await cardAt(['⏹️ Stopping…', '⏹️ Stopped']),
      cardFinal: await cardAt(['⏹️ Stopped']),
      report: (r.reportAt ?? NaN) - press.sentAt,
      aborted: r.aborts.length,
    };
  } else {
    await until('the paused card', async () => Number.isFinite(await cardAt(['⏸️ Paused'])));
    out = { committed: since('paused'), card: await cardAt(['⏸️ Paused']), aborted: r.aborts.length };
    // Held while paused: nothing new may start; Stop then ends the round (its aborts are not this round's).
    await new Promise((res) => setTimeout(res, 100));
    const startedWhilePaused = { calls: r.callsAfterPress, rows: [...r.rowsAfterPress] };
    await peers.press(channel, 'stop', 'U0ADA');
    await until('the report', () => r.reportAt !== null);
    out = { ...out, callsAfterPress: startedWhilePaused.calls, rowIdsWhilePaused: startedWhilePaused.rows };
  }
  const stats = await peers.stats(channel);
  const run = await app.db.db
    .selectFrom('runs')
    .select(['id', 'status'])
    .where('conversation_key', 'like', `${channel}:%`)
    .executeTakeFirstOrThrow();
  const attempts = await app.store.listStepAttempts(run.id);
  // A row that ended `skipped` or `cancelled` without a call is the record of a step that did not run.
  const rows = (out.rowIdsWhilePaused as string[] | undefined) ?? r.rowsAfterPress;
  const ran = (id: string) =>
    attempts.some((a) => a.stepId === id && a.status !== 'skipped' && a.status !== 'cancelled');
  return {
    section: 'stop-breakdown',
    kind: r.kind,
    channel,
    delayMs,
    ack: press.ackMs,
    status: press.status,
    engine: (r.inboundAt ?? NaN) - press.sentAt,
    callsAfterPress: r.callsAfterPress,
    ...out,
    rowsAfterPress: rows.filter(ran).length,
    rowsNotRun: rows.filter((id) => !ran(id)).length,
    rateLimited: stats.rateLimited,
    runStatus: run.status,
    afterStep: attempts.find((a) => a.stepId === 'after')?.status ?? 'no row',
  };
}

function render(rows: Record<string, unknown>[]): string[] {
  const of = (kind: string, key: string) => rows.filter((r) => r.kind === kind).map((r) => Number(r[key]));
  const cell = (xs: number[]) =>
    xs.length === 0 || xs.every((x) => !Number.isFinite(x))
      ? '—'
      : `${quantile(xs, 0.5).toFixed(1)} / ${quantile(xs, 0.99).toFixed(1)}`;
  const line = (what: string, key: string, pause = key) => row([what, cell(of('stop', key)), cell(of('pause', pause))]);
  const stops = rows.filter((r) => r.kind === 'stop');
  const pauses = rows.filter((r) => r.kind === 'pause');
  const afterStop = stops.reduce((n, r) => n + Number(r.callsAfterPress) + Number(r.rowsAfterPress), 0);
  const afterPause = pauses.reduce((n, r) => n + Number(r.callsAfterPress) + Number(r.rowsAfterPress), 0);
  const committedP99 = quantile(of('stop', 'committed'), 0.99);
  const limited = rows.reduce(
    (n, r) => n + Object.values(r.rateLimited as Record<string, number>).reduce((a, b) => a + b, 0),
    0,
  );
  return [
    '## 4. Pause and Stop, broken down',
    '',
    `Pause and Stop through Slack: ${IN_FLIGHT} \`audit.sleep\` calls of ${SLEEP_MS} ms in flight (stdio), one run at a time, PostgreSQL, ` +
      `signed presses to the real Bolt receiver ${PRESS_WITHIN_MS / 1000} s or less after the calls start. ${stops.length} Stop and ${pauses.length} Pause rounds ` +
      'after a warm-up; ms from sending the press, p50 / p99.',
    '',
    ...header(['from the press to…', 'Stop', 'Pause']),
    line('HTTP 200 acknowledgement received', 'ack'),
    line('engine call starts (after the ack)', 'engine'),
    line('state committed (`stopping` / `paused`)', 'committed'),
    line('first abort signal fired', 'abortFirst', '-'),
    line(`last of the ${IN_FLIGHT} abort signals fired`, 'abortLast', '-'),
    line('all in-flight calls settled (cancelled)', 'settled', '-'),
    line('final state committed (`stopped`)', 'final', '-'),
    line('card shows it (chat.update accepted by Slack)', 'card'),
    line('card shows `Stopped`', 'cardFinal', '-'),
    line('report delivered in the thread', 'report', '-'),
    '',
    `Steps started after the press (MCP calls sent + step rows of steps that ran): after Stop ${afterStop}, while paused ${afterPause}; ` +
      `the dependent step was recorded as ${[...new Set(stops.map((r) => String(r.afterStep)))].join('/')} in every Stop round. ` +
      `Pause lets the ${IN_FLIGHT} calls finish (aborts fired while paused: ${pauses.reduce((n, r) => n + Number(r.aborted), 0)}). ` +
      `429s from the fake Slack during these rounds: ${limited}.`,
    `Target: Stop committed ≤ 50 ms p99 after the press: ${committedP99.toFixed(1)} ms ${committedP99 <= 50 ? '✔' : '✘ missed'}; zero steps after Stop: ${afterStop === 0 ? '✔' : '✘ missed'}.`,
  ];
}

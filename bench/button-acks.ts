/**
 * Section 6: how fast Bolt acknowledges a signed button press (idle, and while the largest load runs), and what
 * replayed events do: the same mention delivered three times, the same Approve and Stop presses twice at once.
 * Presses come from a bystander (U0BOB) on the probe run's Pause button: Bolt acks, then the engine refuses it and
 * tells the presser privately, so the presses do not change the load they measure.
 */
import { PROBE_CHANNEL, type LoadContext } from './run-tracker.ts';
import { planText } from './slack-steward.ts';
import { header, quantile, row } from './stats.ts';

/** Acknowledgement times of a series of presses. */
export interface PressAcks {
  presses: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non200: number;
  /** Presses whose round trip overlapped a forced GC of the memory sampler, left out of the figures. */
  setAside: number;
}

/** What the replays did. */
export interface DuplicateResult {
  mentionDeliveries: number;
  mentionStatuses: number[];
  runsFromMention: number;
  approvePresses: number;
  approvesAccepted: number;
  approvesRefused: number;
  noteCalls: number;
  stopPresses: number;
  stopsAccepted: number;
  stopsRefused: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

/** Presses Pause on the probe card as a bystander: `presses` of them now, or (stopOnly) collects a series already started. */
export async function pressAcks(
  c: LoadContext,
  o: { presses?: number; everyMs?: number; stopOnly?: boolean; gcWindows: [number, number][] },
): Promise<PressAcks> {
  if (!o.stopOnly) {
    await c.peers.startPressing({ everyMs: o.everyMs ?? 50, action: 'pause', user: 'U0BOB', prefix: PROBE_CHANNEL });
    await sleep((o.presses ?? 100) * (o.everyMs ?? 50));
  }
  const { sent } = await c.peers.stopPressing();
  return summarizeAcks(sent, o.gcWindows);
}

/** A press series' figures (any platform): presses whose round trip overlapped a forced GC are set aside. */
export function summarizeAcks(
  sent: readonly { sentAt: number; ackMs: number; status: number }[],
  gcWindows: readonly [number, number][],
): PressAcks {
  const overlaps = (s: { sentAt: number; ackMs: number }) =>
    gcWindows.some(([a, b]) => s.sentAt < b && s.sentAt + s.ackMs > a);
  const kept = sent.filter((s) => !overlaps(s));
  const acks = kept.map((s) => s.ackMs);
  return {
    presses: kept.length,
    p50Ms: quantile(acks, 0.5),
    p99Ms: quantile(acks, 0.99),
    maxMs: Math.max(...acks),
    non200: sent.filter((s) => s.status !== 200).length,
    setAside: sent.length - kept.length,
  };
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function decisionsOf(c: LoadContext, channel: string, action: string): Promise<{ accepted: boolean }[]> {
  return c.app.db.db
    .selectFrom('decisions')
    .innerJoin('runs', 'runs.id', 'decisions.run_id')
    .select(['decisions.accepted'])
    .where('runs.conversation_key', 'like', `${channel}:%`)
    .where('decisions.action', '=', action)
    .where('decisions.actor_id', '!=', 'U0BOB')
    .execute();
}

/** Replays a mention, an Approve and a Stop; counts runs, accepted decisions and tool calls. */
export async function duplicates(c: LoadContext): Promise<DuplicateResult> {
  const { peers, tracker, app } = c;
  // Slack redelivers with the same event_id: twice at once, then a retry after the first run has ended.
  tracker.watch('C0DUPM');
  tracker.watch('C0DUPA');
  const mention = await peers.mentionBody({ channel: 'C0DUPM', user: 'U0DUPM', text: 'sleep three times' });
  const first = await Promise.all([peers.replay(mention, JSON_TYPE), peers.replay(mention, JSON_TYPE)]);
  await until('the mentioned run', () => tracker.settled('C0DUPM') >= 1);
  const retry = await peers.replay(mention, JSON_TYPE, {
    'x-slack-retry-num': '1',
    'x-slack-retry-reason': 'http_timeout',
  });
  await sleep(500);
  const runs = await app.db.db.selectFrom('runs').select('id').where('conversation_key', 'like', 'C0DUPM:%').execute();

  // A medium-risk plan (audit.note writes) waits for review; the same Approve press arrives twice at once.
  await peers.script(
    planText('Write one note', [{ id: 'n', tool: 'audit.note', args: { text: 'once' } }]),
    'Noted once.',
  );
  await peers.mentions([{ channel: 'C0DUPA', user: 'U0DUPA', text: 'write a note' }]);
  await until('the review card', () => tracker.of('C0DUPA')[0]?.card !== undefined);
  const approve = await peers.pressBody('C0DUPA', 'approve', 'U0DUPA');
  await Promise.all([peers.replay(approve, FORM), peers.replay(approve, FORM)]);
  await until('the approved run', () => tracker.settled('C0DUPA') >= 1);
  const approved = await decisionsOf(c, 'C0DUPA', 'approve');
  const runId = tracker.of('C0DUPA')[0]?.runId ?? '';
  const noteCalls = (await app.store.listStepAttempts(runId)).filter(
    (a) => a.stepId === 'n' && a.status === 'succeeded',
  ).length;

  // The probe run's requester presses Stop, and the press arrives twice at once.
  const stop = await peers.pressBody(PROBE_CHANNEL, 'stop', 'U0PROBE');
  await Promise.all([peers.replay(stop, FORM), peers.replay(stop, FORM)]);
  await until('the probe run to stop', () => tracker.settled(PROBE_CHANNEL) >= 1, 60_000);
  const stops = await decisionsOf(c, PROBE_CHANNEL, 'stop');
  return {
    mentionDeliveries: 3,
    mentionStatuses: [...first, retry],
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

/** One series of presses as a table row: when, presses, p50, p99, max, non-200, set aside. */
export function pressRow(when: string, a: PressAcks): string {
  return row([when, a.presses, a.p50Ms.toFixed(1), a.p99Ms.toFixed(1), a.maxMs.toFixed(1), a.non200, a.setAside]);
}

/** Section 6's Markdown. */
export function buttonSection(
  idle: PressAcks,
  saturated: { when: string; acks: PressAcks }[],
  d: DuplicateResult,
): string[] {
  const line = pressRow;
  const p99 = Math.max(...saturated.map((x) => x.acks.p99Ms));
  const dupRuns = d.runsFromMention - 1;
  return [
    '## 6. Button press → HTTP acknowledgement',
    '',
    `A bystander presses Pause on a live card every 50 ms (signed block_actions to the real Bolt receiver, sent from the peers' process); ` +
      'Bolt acks, then the engine refuses the press and tells the presser privately. ms from sending to the HTTP 200.',
    '',
    ...header(['when', 'presses', 'p50 ms', 'p99 ms', 'max ms', 'not 200', 'set aside (forced GC)']),
    line('idle (one live run)', idle),
    ...saturated.map((x) => line(x.when, x.acks)),
    '',
    `Replays: one mention delivered ${d.mentionDeliveries} times (two at once, then a retry with \`x-slack-retry-num: 1\` after the run ended; ` +
      `HTTP ${d.mentionStatuses.join(', ')}) → ${d.runsFromMention} run; the same Approve press twice at once → ${d.approvesAccepted} accepted, ` +
      `${d.approvesRefused} refused, the note written ${d.noteCalls} time(s); the same Stop press twice at once → ${d.stopsAccepted} accepted, ${d.stopsRefused} refused.`,
    `Targets: button ack p99 < 100 ms at saturation (worst series): ${Number.isFinite(p99) ? `${p99.toFixed(1)} ms ${p99 < 100 ? '✔' : '✘ missed'}` : 'not measured'}; ` +
      `zero duplicate runs: ${dupRuns} ${dupRuns === 0 && d.noteCalls === 1 && d.approvesAccepted === 1 && d.stopsAccepted === 1 ? '✔' : '✘ missed'}.`,
  ];
}

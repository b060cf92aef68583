/**
 * Steward's remote peers for the Slack benchmarks, in their own process so their work stays off the measured event
 * loop: the fake LLM (answering at once, scripted by role), the fake Slack Web API (optionally rate limited), and
 * the Slack side of the Events API, which sends signed mentions and button presses to Steward and times each
 * HTTP acknowledgement. The parent talks to it over IPC through `startSlackPeers`.
 *
 * Times that cross the process boundary are epoch milliseconds (`performance.timeOrigin + performance.now()`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { byRole, startFakeLlm, type FakeLlm } from '../test/fakes/fake-llm-server.ts';
import {
  SLACK_RATE_LIMITS,
  startFakeSlack,
  type FakeMessage,
  type FakeSlack,
  type SlackRateLimit,
} from '../test/fakes/fake-slack-server.ts';
import { payloadText } from '../test/bot/slack/block-kit-limits.ts';
import { createBlockAction, createMention, eventEnvelope, interactionBody, newTs } from '../test/e2e/slack-requests.ts';

/** Epoch milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** One signed request as the Slack side sent it. */
export interface Sent {
  sentAt: number;
  ackMs: number;
  status: number;
}

/** A mention to send: a new thread in `channel`. */
export interface MentionSpec {
  channel: string;
  user: string;
  text: string;
}

/** A card call (post or update) as the fake Slack received it. */
export interface CardCall {
  at: number;
  method: string;
  title: string;
  status: number;
}

/** What the fake Slack saw, for a set of channels. */
export interface SlackStats {
  calls: Record<string, number>;
  rateLimited: Record<string, number>;
  /** Cards by the title they show now (e.g. `✅ Completed`). */
  cardTitles: Record<string, number>;
  /** Report-like replies (bot messages in a thread that are not cards). */
  replies: number;
  /**
   * How clients answered 429s: for each refused call, the next call of the same method on the same message (updates)
   * or in the same thread with the same text (posts), and its gap minus the Retry-After (negative: retried too early).
   */
  retries: { refused: number; retried: number; minMarginMs: number; medianGapMs: number };
}

/** The running peers. */
export interface SlackPeers {
  llmBaseURL: string;
  slackApiUrl: string;
  botToken: string;
  botUserId: string;
  /** Scripts the fake LLM: the planner's and the synthesizer's answer to every request. */
  script(planner: string, synthesizer: string): Promise<void>;
  /** Where Steward's Bolt receiver listens, and its signing secret. */
  target(url: string, secret: string): Promise<void>;
  /** Sends every mention at once; resolves when all are acknowledged. */
  mentions(list: MentionSpec[]): Promise<(Sent & { channel: string; ts: string })[]>;
  /** Presses `action` on the newest card in `channel`, as `user`. */
  press(channel: string, action: string, user: string): Promise<Sent>;
  /** Presses `action` as `user` every `everyMs` on a random card (in channels starting with `prefix`) offering it. */
  startPressing(o: { everyMs: number; action: string; user: string; prefix: string }): Promise<void>;
  stopPressing(): Promise<{ sent: Sent[]; noCard: number }>;
  /** Posts a body exactly as given (a replay), signed, with extra headers; resolves with the HTTP status. */
  replay(body: string, contentType: string, headers?: Record<string, string>): Promise<number>;
  /** The body of a block_actions press on the newest card in `channel` (for replays). */
  pressBody(channel: string, action: string, user: string): Promise<string>;
  /** An app_mention envelope (for replays). */
  mentionBody(m: MentionSpec): Promise<string>;
  /** Posts and updates of the cards in `channel` since `since`. */
  cardCalls(channel: string, since: number): Promise<CardCall[]>;
  stats(prefix: string): Promise<SlackStats>;
  /** Refills the rate-limit buckets (each load level starts in a fresh minute) and zeroes the 429 counts. */
  resetRateLimits(): Promise<void>;
  /** Turns the fake Slack's rate limits on or off from now on. */
  setRateLimits(on: boolean): Promise<void>;
  close(): Promise<void>;
}

type Request = { id: number; type: string; [k: string]: unknown };
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** Starts the peers' process; `rateLimits` turns on Slack's limits in the fake (SLACK_RATE_LIMITS). */
export async function startSlackPeers(options: { rateLimits: boolean }): Promise<SlackPeers> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--peers-child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit').catch(() => undefined);
  const waiting = new Map<number, (r: Reply) => void>();
  let nextId = 1;
  child.on('message', (raw) => {
    const r = raw as Reply;
    waiting.get(r.id)?.(r);
  });
  const ask = <T>(type: string, args: Record<string, unknown> = {}): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, (r) => {
        waiting.delete(id);
        if (r.ok) resolve(r.value as T);
        else reject(new Error(`slack peers (${type}): ${r.error}`));
      });
      child.send({ id, type, ...args });
    });
  const started = await ask<{ llmBaseURL: string; slackApiUrl: string; botToken: string; botUserId: string }>(
    'start',
    options,
  );
  return {
    ...started,
    script: (planner, synthesizer) => ask('script', { planner, synthesizer }),
    target: (url, secret) => ask('target', { url, secret }),
    mentions: (list) => ask('mentions', { list }),
    press: (channel, action, user) => ask('press', { channel, action, user }),
    startPressing: (o) => ask('startPressing', o),
    stopPressing: () => ask('stopPressing'),
    replay: (body, contentType, headers = {}) => ask('replay', { body, contentType, headers }),
    pressBody: (channel, action, user) => ask('pressBody', { channel, action, user }),
    mentionBody: (m) => ask('mentionBody', { m }),
    cardCalls: (channel, since) => ask('cardCalls', { channel, since }),
    stats: (prefix) => ask('stats', { prefix }),
    resetRateLimits: () => ask('resetRateLimits'),
    setRateLimits: (on) => ask('setRateLimits', { on }),
    close: async () => {
      if (child.connected) child.send({ id: 0, type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---- the child's side -------------------------------------------------------------------------------------------

interface ChildState {
  llm: FakeLlm;
  slack: FakeSlack;
  /** The limits the fake reads on every call (mutated to turn them on and off). */
  limits: Record<string, SlackRateLimit>;
  url: string;
  secret: string;
  pressing: { timer: NodeJS.Timeout; sent: Promise<Sent>[]; noCard: number } | null;
}

/** Signs and posts a body the way Slack does (v0 HMAC-SHA256), timing the response's arrival. */
async function post(
  s: ChildState,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<Sent> {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', s.secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const sentAt = epochNow();
  const res = await fetch(s.url, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
      ...headers,
    },
    body,
  });
  const ackMs = epochNow() - sentAt;
  await res.arrayBuffer();
  return { sentAt, ackMs, status: res.status };
}

const isCard = (m: FakeMessage) => m.blocks[0]?.type === 'header';
const titleOf = (blocks: unknown): string => {
  const first = Array.isArray(blocks) ? (blocks[0] as { text?: { text?: string } } | undefined) : undefined;
  return (first?.text?.text ?? '').replace(/ · revision \d+$/, '');
};

function buttonValue(card: FakeMessage, action: string): string | undefined {
  for (const b of card.blocks) {
    if (b.type !== 'actions') continue;
    const found = (b.elements as { action_id: string; value: string }[]).find(
      (e) => e.action_id === `steward.${action}`,
    );
    if (found) return found.value;
  }
  return undefined;
}

function newestCard(s: ChildState, channel: string): FakeMessage | undefined {
  let found: FakeMessage | undefined;
  for (const m of s.slack.messages.values()) if (m.channel === channel && isCard(m)) found = m;
  return found;
}

function pressBodyFor(s: ChildState, card: FakeMessage, action: string, user: string): string | null {
  const value = buttonValue(card, action);
  if (value === undefined) return null;
  return interactionBody(
    createBlockAction({
      user,
      actionId: `steward.${action}`,
      value,
      channel: card.channel,
      messageTs: card.ts,
      threadTs: card.threadTs,
      triggerId: s.slack.newTriggerId(),
      botUserId: s.slack.botUserId,
    }),
  );
}

const FORM = 'application/x-www-form-urlencoded';

function retriesOf(calls: FakeSlack['calls'], prefix: string): SlackStats['retries'] {
  // An update names its message; a post is the same post again when it goes to the same thread with the same text.
  const keyOf = (c: FakeSlack['calls'][number]) =>
    `${c.method}|${String(c.args.channel)}|${c.method === 'chat.update' ? String(c.args.ts) : `${String(c.args.thread_ts)}|${String(c.args.text)}`}`;
  const later = new Map<string, number[]>();
  calls.forEach((c, i) => later.set(keyOf(c), [...(later.get(keyOf(c)) ?? []), i]));
  const gaps: { gap: number; margin: number }[] = [];
  let refused = 0;
  calls.forEach((c, i) => {
    if (c.status !== 429 || !payloadText(c.args.channel).startsWith(prefix)) return;
    refused += 1;
    const next = later.get(keyOf(c))?.find((j) => j > i);
    if (next === undefined) return;
    const gap = (calls[next] as FakeSlack['calls'][number]).at - c.at;
    gaps.push({ gap, margin: gap - (c.retryAfter ?? 0) * 1000 });
  });
  const sorted = gaps.map((g) => g.gap).sort((a, b) => a - b);
  return {
    refused,
    retried: gaps.length,
    minMarginMs: Math.min(...gaps.map((g) => g.margin)),
    medianGapMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
  };
}

async function handle(s: ChildState, m: Request): Promise<unknown> {
  switch (m.type) {
    case 'script':
      s.llm.setScript(byRole({ planner: String(m.planner), synthesizer: String(m.synthesizer) }));
      // Requests are recorded forever; a load of thousands should not keep them.
      s.llm.reset();
      return null;
    case 'target':
      s.url = String(m.url);
      s.secret = String(m.secret);
      return null;
    case 'mentions':
      return Promise.all(
        (m.list as MentionSpec[]).map(async (spec) => {
          const ts = newTs();
          const body = eventEnvelope(
            createMention({ text: spec.text, user: spec.user, channel: spec.channel, ts }, s.slack.botUserId),
            s.slack.botUserId,
          );
          return { ...(await post(s, body, 'application/json')), channel: spec.channel, ts };
        }),
      );
    case 'press': {
      const card = newestCard(s, String(m.channel));
      const body = card && pressBodyFor(s, card, String(m.action), String(m.user));
      if (!body) throw new Error(`no ${String(m.action)} button on a card in ${String(m.channel)}`);
      return post(s, body, FORM);
    }
    case 'pressBody': {
      const card = newestCard(s, String(m.channel));
      const body = card && pressBodyFor(s, card, String(m.action), String(m.user));
      if (!body) throw new Error(`no ${String(m.action)} button on a card in ${String(m.channel)}`);
      return body;
    }
    case 'mentionBody': {
      const spec = m.m as MentionSpec;
      return eventEnvelope(
        createMention({ text: spec.text, user: spec.user, channel: spec.channel }, s.slack.botUserId),
        s.slack.botUserId,
      );
    }
    case 'replay':
      return (await post(s, String(m.body), String(m.contentType), m.headers as Record<string, string>)).status;
    case 'startPressing': {
      const { everyMs, action, user, prefix } = m as unknown as {
        everyMs: number;
        action: string;
        user: string;
        prefix: string;
      };
      const state = {
        sent: [] as Promise<Sent>[],
        noCard: 0,
        timer: setInterval(() => {
          const offering = [...s.slack.messages.values()].filter(
            (c) => c.channel.startsWith(prefix) && isCard(c) && buttonValue(c, action) !== undefined,
          );
          const card = offering[Math.floor(Math.random() * offering.length)];
          const body = card && pressBodyFor(s, card, action, user);
          if (!body) {
            state.noCard += 1;
            return;
          }
          state.sent.push(post(s, body, FORM));
        }, everyMs),
      };
      s.pressing = state;
      return null;
    }
    case 'stopPressing': {
      const p = s.pressing;
      s.pressing = null;
      if (!p) return { sent: [], noCard: 0 };
      clearInterval(p.timer);
      return { sent: await Promise.all(p.sent), noCard: p.noCard };
    }
    case 'cardCalls': {
      const since = Number(m.since);
      const cards = new Set(
        [...s.slack.messages.values()].filter((c) => c.channel === m.channel && isCard(c)).map((c) => c.ts),
      );
      return s.slack.calls
        .filter(
          (c) =>
            c.args.channel === m.channel &&
            c.at >= Math.floor(since) &&
            (c.method === 'chat.update'
              ? cards.has(String(c.args.ts))
              : c.method === 'chat.postMessage' && titleOf(c.args.blocks) !== ''),
        )
        .map((c): CardCall => ({ at: c.at, method: c.method, title: titleOf(c.args.blocks), status: c.status ?? 200 }));
    }
    case 'stats': {
      const prefix = String(m.prefix);
      const calls: Record<string, number> = {};
      for (const c of s.slack.calls)
        if (payloadText(c.args.channel).startsWith(prefix)) calls[c.method] = (calls[c.method] ?? 0) + 1;
      const cardTitles: Record<string, number> = {};
      let replies = 0;
      for (const msg of s.slack.messages.values()) {
        if (!msg.channel.startsWith(prefix)) continue;
        if (isCard(msg)) cardTitles[titleOf(msg.blocks)] = (cardTitles[titleOf(msg.blocks)] ?? 0) + 1;
        else replies += 1;
      }
      return {
        calls,
        rateLimited: { ...s.slack.rateLimited },
        cardTitles,
        replies,
        retries: retriesOf(s.slack.calls, prefix),
      } satisfies SlackStats;
    }
    case 'setRateLimits':
      for (const k of Object.keys(s.limits)) delete s.limits[k];
      if (m.on) Object.assign(s.limits, SLACK_RATE_LIMITS);
      return null;
    case 'resetRateLimits':
      s.slack.resetRateLimits();
      for (const k of Object.keys(s.slack.rateLimited)) delete s.slack.rateLimited[k];
      return null;
    default:
      throw new Error(`unknown request ${m.type}`);
  }
}

async function runChild(): Promise<void> {
  let state: ChildState | undefined;
  const reply = (r: Reply) => process.send?.(r);
  process.on('message', (raw: unknown) => {
    const m = raw as Request;
    void (async () => {
      if (m.type === 'close') {
        if (state) {
          if (state.pressing) clearInterval(state.pressing.timer);
          await state.slack.close();
          await state.llm.close();
        }
        process.disconnect?.();
        return;
      }
      if (m.type === 'start') {
        const llm = await startFakeLlm(byRole({}));
        const limits: Record<string, SlackRateLimit> = m.rateLimits ? { ...SLACK_RATE_LIMITS } : {};
        const slack = await startFakeSlack({ rateLimits: limits });
        state = { llm, slack, limits, url: '', secret: '', pressing: null };
        reply({
          id: m.id,
          ok: true,
          value: {
            llmBaseURL: llm.baseURL,
            slackApiUrl: slack.apiUrl,
            botToken: slack.botToken,
            botUserId: slack.botUserId,
          },
        });
        return;
      }
      if (!state) throw new Error('not started');
      reply({ id: m.id, ok: true, value: await handle(state, m) });
    })().catch((err: unknown) =>
      reply({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  // The parent going away (even by a crash) ends this process.
  process.on('disconnect', () => process.exit(0));
}

if (process.argv.includes('--peers-child')) void runChild();

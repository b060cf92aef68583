import { describe, expect, it } from 'vitest';
import { CallSlots, type SlotWait } from '../../src/mcp/call-slots.ts';

const open = () => new AbortController().signal;
const LONG = 60_000;

/** Asks for a slot and records, in `order`, when it was granted. */
function ask(slots: CallSlots, label: string, order: string[], signal = open(), timeoutMs = LONG): Promise<SlotWait> {
  return slots.acquire(signal, timeoutMs).then((wait) => {
    if (wait.kind === 'granted') order.push(label);
    return wait;
  });
}

async function granted(wait: Promise<SlotWait>): Promise<() => void> {
  const w = await wait;
  if (w.kind !== 'granted') throw new Error(`expected a slot, got ${w.kind}`);
  return w.release;
}

describe('CallSlots', () => {
  it('without a limit grants every call at once', async () => {
    const slots = new CallSlots(undefined);
    const waits = await Promise.all(Array.from({ length: 20 }, () => slots.acquire(open(), LONG)));
    expect(waits.every((w) => w.kind === 'granted')).toBe(true);
    expect(slots.busy).toBe(20);
  });

  it('holds calls beyond the limit and hands slots on in the order they were asked for', async () => {
    const slots = new CallSlots(2);
    const order: string[] = [];
    const a = ask(slots, 'a', order);
    const b = ask(slots, 'b', order);
    const rest = ['c', 'd', 'e'].map((l) => ask(slots, l, order));
    await Promise.all([a, b]);
    expect([order, slots.busy, slots.waiting]).toEqual([['a', 'b'], 2, 3]);
    (await granted(b))();
    (await granted(a))();
    await Promise.all(rest.slice(0, 2));
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    // A newcomer while 'e' waits goes behind it, even when a slot comes free.
    const f = ask(slots, 'f', order);
    (await granted(rest[0]!))();
    await rest[2];
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(slots.waiting).toBe(1);
    (await granted(rest[1]!))();
    await f;
    expect(order.at(-1)).toBe('f');
  });

  it('a release given twice frees one slot only', async () => {
    const slots = new CallSlots(1);
    const release = await granted(slots.acquire(open(), LONG));
    const next = slots.acquire(open(), LONG);
    const third = slots.acquire(open(), LONG);
    release();
    release();
    await next;
    expect([slots.busy, slots.waiting]).toEqual([1, 1]);
    (await granted(next))();
    (await granted(third))();
    expect(slots.busy).toBe(0);
  });

  it('a waiting call that is aborted leaves the queue, never gets a slot, and does not hold up the next', async () => {
    const slots = new CallSlots(1);
    const order: string[] = [];
    const first = await granted(ask(slots, 'first', order));
    const stop = new AbortController();
    const stopped = ask(slots, 'stopped', order, stop.signal);
    const next = ask(slots, 'next', order);
    stop.abort();
    expect(await stopped).toEqual({ kind: 'aborted' });
    first();
    await next;
    expect(order).toEqual(['first', 'next']);
    expect(await slots.acquire(AbortSignal.abort(), LONG)).toEqual({ kind: 'aborted' });
  });

  it('a waiting call whose timeout passes gives up without a slot', async () => {
    const slots = new CallSlots(1);
    const first = await granted(slots.acquire(open(), LONG));
    expect(await slots.acquire(open(), 20)).toEqual({ kind: 'timeout' });
    expect([slots.busy, slots.waiting]).toEqual([1, 0]);
    first();
    expect(slots.busy).toBe(0);
  });
});

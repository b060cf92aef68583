import { describe, expect, it } from 'vitest';
import { summarizeAcks } from '../../bench/button-acks.ts';

describe("a press series' acknowledgement figures", () => {
  it('sets aside the presses whose round trip overlapped a forced GC, and counts refusals among all presses', () => {
    const sent = [
      { sentAt: 0, ackMs: 10, status: 200 },
      { sentAt: 50, ackMs: 20, status: 200 },
      // Overlaps the GC window below: its time says more about the sampler than about Steward.
      { sentAt: 100, ackMs: 500, status: 200 },
      { sentAt: 150, ackMs: 30, status: 404 },
    ];
    const acks = summarizeAcks(sent, [[300, 400]]);
    expect(acks).toMatchObject({ presses: 3, setAside: 1, non200: 1, maxMs: 30 });
    expect(acks.p50Ms).toBe(20);
  });

  it('gives no figure rather than a made-up one when no press was made', () => {
    const acks = summarizeAcks([], []);
    expect(acks.presses).toBe(0);
    expect(Number.isFinite(acks.p99Ms)).toBe(false);
  });
});

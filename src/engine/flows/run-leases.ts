/**
 * The runs this process holds a lease on, with the fence each was claimed under. A run is held from its creation (or
 * its takeover) until it ended and reported; the lease is renewed while the process lives, and a run whose lease
 * another process took is let go here at the next renewal.
 */
import type { RunOwnership } from '../ports.ts';

/** Default lease: long enough to ride out a short database restart, short enough for a quick takeover. */
export const DEFAULT_LEASE_MS = 15_000;

/** Leases held by this process, by run id. */
export class RunLeases {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly store: RunOwnership,
    readonly ttlMs: number,
  ) {}

  has(runId: string): boolean {
    return this.held.has(runId);
  }

  /** The runs this process holds. */
  ids(): string[] {
    return [...this.held.keys()];
  }

  /** The fence this process holds the run under, if it holds it. */
  fenceOf(runId: string): number | undefined {
    return this.held.get(runId);
  }

  /** Notes a lease taken elsewhere (a new run is created held, under fence 0; a takeover returns its fence). */
  hold(runId: string, fence: number): void {
    this.held.set(runId, fence);
  }

  /** Claims a run nobody holds; false when another process holds it. */
  async claim(runId: string): Promise<boolean> {
    const fence = await this.store.claimRun(runId, this.ttlMs);
    if (fence === null) return false;
    this.held.set(runId, fence);
    return true;
  }

  /** Forgets a run whose lease the store let go with another write (its report was sent). */
  forget(runId: string): void {
    this.held.delete(runId);
  }

  /** Lets go of a run, so another process may take it at once. */
  async release(runId: string): Promise<void> {
    if (!this.held.delete(runId)) return;
    await this.store.releaseRun(runId);
  }

  /** Lets go of every run (at shutdown); failures are left to lapse. */
  async releaseAll(): Promise<void> {
    const ids = [...this.held.keys()];
    this.held.clear();
    await Promise.allSettled(ids.map((id) => this.store.releaseRun(id)));
  }

  /**
   * Renews every lease; returns the runs this process held and lost (another process took them over). Runs that
   * ended and reported are no longer renewed and are simply forgotten.
   */
  async renew(): Promise<string[]> {
    // Only runs held before the renewal was sent can be judged by its answer: a run created or claimed meanwhile
    // may have committed after the renewal's snapshot, and is missing from the answer without being lost.
    const before = new Map(this.held);
    const kept = new Set(await this.store.renewLeases([...before.keys()], this.ttlMs));
    const lost: string[] = [];
    for (const [runId, fence] of before) {
      if (kept.has(runId) || this.held.get(runId) !== fence) continue;
      this.held.delete(runId);
      lost.push(runId);
    }
    return lost;
  }
}

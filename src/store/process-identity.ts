/**
 * Who holds a run's lease: a name for this process that says where it runs, so a process on the same machine can
 * tell that a holder died (its pid is gone) and take its runs at once instead of waiting for the lease to lapse.
 *
 * `host:pid:machine:nonce`, where `machine` is a digest of the kernel's boot id and this process's pid namespace:
 * two names with the same `machine` see the same pids, so `process.kill(pid, 0)` answers for the other one. Where
 * that cannot be known (no /proc), `machine` is unique to this process and nobody judges its liveness by pid.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { isProcessAlive } from '../process-alive.ts';

/** The pid namespace and boot this process sees, or null when the system does not say. */
function machineKey(): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pids = readlinkSync('/proc/self/ns/pid');
    return createHash('sha256').update(`${boot}\n${pids}`).digest('hex').slice(0, 16);
  } catch {
    return null;
  }
}

const MACHINE = machineKey();

/** A new owner name for this process (unique even when a pid is reused). */
export function newOwnerId(): string {
  const host = hostname().replace(/:/g, '_').slice(0, 60);
  const machine = MACHINE ?? `solo-${randomBytes(8).toString('hex')}`;
  return `${host}:${process.pid}:${machine}:${randomBytes(4).toString('hex')}`;
}

/**
 * The owners among `owners` that certainly died: they ran where this process runs (same boot, same pid
 * namespace), and their pid is gone. A reused pid looks alive, which only makes the caller wait for the lease.
 */
export function deadLocalOwners(owners: readonly string[], self: string): string[] {
  if (MACHINE === null) return [];
  return owners.filter((owner) => {
    if (owner === self) return false;
    const [, pid, machine] = owner.split(':');
    return machine === MACHINE && !isProcessAlive(Number(pid));
  });
}

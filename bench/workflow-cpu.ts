/**
 * CPU spent during the fire window, from /proc (Linux; elsewhere the machine and PostgreSQL figures are NaN): the
 * whole machine's busy share, this process's CPU time, and every PostgreSQL process's (other databases' work on the
 * same server included), so a missed lateness target can be put down to the CPU or to waiting.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU used over a window, in ms (machine: busy share 0..1 of all cores). */
export interface CpuWindow {
  wallMs: number;
  machineBusy: number;
  cores: number;
  stewardMs: number;
  postgresMs: number;
}

/** clock ticks per second of /proc's figures (USER_HZ, 100 on Linux). */
const HZ = 100;

function machine(): { busy: number; total: number; cores: number } {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    const fields = (lines[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    const total = fields.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total, cores: lines.filter((l) => /^cpu\d/.test(l)).length };
  } catch {
    return { busy: NaN, total: NaN, cores: NaN };
  }
}

function postgresTicks(): number {
  let ticks = 0;
  try {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (!stat.includes('(postgres)')) continue;
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(rest[11]) + Number(rest[12]);
      } catch {
        // The process ended between the listing and the read.
      }
    }
    return ticks;
  } catch {
    return NaN;
  }
}

/** Starts measuring; `stop()` gives the window's figures. */
export function startCpuWindow(): { stop(): CpuWindow } {
  const t0 = performance.now();
  const m0 = machine();
  const own0 = process.cpuUsage();
  const pg0 = postgresTicks();
  return {
    stop() {
      const m1 = machine();
      const own = process.cpuUsage(own0);
      return {
        wallMs: performance.now() - t0,
        machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
        cores: m1.cores,
        stewardMs: (own.user + own.system) / 1000,
        postgresMs: ((postgresTicks() - pg0) * 1000) / HZ,
      };
    },
  };
}

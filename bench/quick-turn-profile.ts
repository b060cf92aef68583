/**
 * Steward's own work per front desk turn at fan-out 8, alone: section 11's wiring (README quick-answer settings, the
 * planner asked only once the front desk hands over, so no planner call runs beside), the fan-8 tasks the front desk
 * answers, a warm-up, then `BENCH_ROUNDS` rounds under the CPU profiler (`BENCH_FRONT_DESK=beside`: the planner
 * asked beside, as by default). Prints the own time per turn from the spans
 * (bench/run-spans.ts), where it goes between the calls (each gap in which no call was in flight), and the top CPU
 * costs per turn. `npx tsx bench/quick-turn-profile.ts` takes a minute or so.
 */
import type { OutboundMessage } from '../src/engine/messages.ts';
import type { Notifier } from '../src/engine/ports.ts';
import { Steward } from '../src/engine/flows/steward.ts';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { busyMs, profileCpu, profileTable, topInclusive, topSelf } from './cpu-profile.ts';
import { taskTag } from './fake-model.ts';
import { PEER_LATENCY, PEER_TOOL_MS } from './latency-model.ts';
import { benchSettings, readProfile } from './profile.ts';
import { askAndWait, declaredReadOnly } from './quick-answers.ts';
import { RecordingTelemetry, inFlightMs, QUICK_CALLS, quickPhases } from './run-spans.ts';
import { median } from './stats.ts';
import { flooredTools } from './timeline.ts';
import { openWorld } from './world.ts';

interface Turned {
  ownMs: number;
  turns: number;
  phases: Record<string, number>;
}

async function main(): Promise<void> {
  const profile = readProfile(process.argv.slice(2), process.env);
  const world = await openWorld({ scale: profile.scale, seed: profile.seed });
  const telemetry = new RecordingTelemetry();
  // BENCH_FRONT_DESK=beside asks the planner beside the front desk, as by default (its call is dropped on an answer).
  const frontDesk = process.env['BENCH_FRONT_DESK'] === 'beside' ? 'beside' : 'after';
  const waiters = new Map<string, (m: OutboundMessage) => void>();
  const notifier: Notifier = { send: async (c, m) => waiters.get(c.key)?.(m) };
  const steward = new Steward({
    llm: world.llm,
    tools: declaredReadOnly(flooredTools(world.host, PEER_TOOL_MS * profile.scale)),
    store: new PgRunStore(world.db.db),
    notifier,
    clock: () => new Date(),
    newId: () => crypto.randomUUID(),
    log: () => undefined,
    telemetry,
    settings: { ...benchSettings(8), quickAnswers: { maxTurns: 4, maxTokens: 12_000, frontDesk } },
  });
  const tasks = world.tasks.filter((t) => t.shape === 'fan-8');
  const one = async (taskIndex: number, round: number): Promise<Turned | undefined> => {
    const task = tasks[taskIndex % tasks.length]!;
    const key = `turns-${task.id}-${round}-${crypto.randomUUID()}`;
    const startMs = Date.now();
    const end = await askAndWait(steward, key, `${taskTag(task.id, round)} ${task.request}`, waiters);
    await world.fake.flush();
    const run = await world.db.db
      .selectFrom('runs')
      .select(['id', 'route'])
      .where('conversation_key', '=', key)
      .executeTakeFirstOrThrow();
    const spans = telemetry.take(run.id);
    const turns = spans.models.filter((c) => c.role === 'butler').length;
    if (run.route !== 'quick' || turns === 0) return undefined;
    const phases = quickPhases(spans, startMs, startMs + end.wallMs);
    return { ownMs: end.wallMs - inFlightMs(spans, QUICK_CALLS), turns, phases };
  };
  try {
    await world.fake.configure({ ...world.fakeConfig, latency: PEER_LATENCY });
    await world.fake.flush();
    for (let i = 0; i < 4; i++) await one(i, 0);
    const { result, profile: cpu } = await profileCpu(async () => {
      const out: Turned[] = [];
      for (let round = 1; round <= profile.rounds; round++) {
        for (let i = 0; i < tasks.length; i++) {
          const r = await one(i, round);
          if (r) out.push(r);
        }
      }
      return out;
    });
    const turns = result.reduce((n, r) => n + r.turns, 0);
    const perTurn = result.map((r) => r.ownMs / r.turns);
    const phaseNames = ['before', 'toCalls', 'toModel', 'after'];
    process.stdout.write(
      [
        `${result.length} fan-8 requests answered by the front desk (planner ${frontDesk}), ${turns} turns, scale ${profile.scale}`,
        `own ms per turn (spans): median ${median(perTurn).toFixed(1)}, each: ${perTurn.map((x) => x.toFixed(1)).join(' ')}`,
        ...phaseNames.map(
          (name) => `  ${name}: median ${median(result.map((r) => r.phases[name] ?? 0)).toFixed(1)} ms`,
        ),
        `busy CPU of this process per turn: ${(busyMs(cpu) / turns).toFixed(1)} ms (the MCP servers and the model are other processes)`,
        '',
        'Self time:',
        ...profileTable(topSelf(cpu, 25), turns, 'per turn'),
        '',
        'Inclusive, src/ only:',
        ...profileTable(topInclusive(cpu, 30), turns, 'per turn'),
        '',
      ].join('\n'),
    );
  } finally {
    await steward.shutdown();
    await world.close();
  }
}

await main();

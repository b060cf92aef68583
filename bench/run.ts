/**
 * `npm run bench` (quick profile) or `npm run bench -- --full`: Steward against LangGraph's agent (issue 13's
 * latency model), against ReAct and against the analytic limit, parallel against sequential, the dispatcher's overhead with and without PostgreSQL, CPU
 * profiles of where the time goes, Pause/Stop, and several processes on one database. Prints a Markdown report and
 * writes it to bench/out/report.md, with every measured run as a JSON line in bench/out/rows.jsonl.
 * `BENCH_ONLY=peer` runs the comparison against LangGraph alone; `BENCH_ONLY=workflows` runs section 8 (1,000
 * workflow schedules due at one instant) alone; `BENCH_ONLY=quick` runs section 9 (quick answers against the plan
 * path on single lookups) alone; `BENCH_ONLY=estimates` runs section 10 (the plan card's estimates against what the
 * runs took) alone; `BENCH_ONLY=frontdesk` runs section 11 (the README defaults on read-only closed-world tools: the
 * planner beside the front desk, after it, quick answers off, and LangGraph) alone; `BENCH_ONLY=cache` runs section 12
 * (how much of the planner's and front desk's prompts OpenAI's and Anthropic's prompt caches serve) alone.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { PgRunStore } from '../src/store/pg-run-store.ts';
import { benchAgainstPeer } from './against-peer.ts';
import { benchAgainstReact, benchRateLimited, runPass } from './against-react.ts';
import { benchCatalogSize } from './catalog-size.ts';
import { busyMs, profileCpu, topInclusive, topSelf } from './cpu-profile.ts';
import { environmentLines, readEnvironment } from './environment.ts';
import { benchEstimates } from './estimates.ts';
import { benchOverhead, driverChains } from './overhead.ts';
import { readProfile } from './profile.ts';
import { renderPeerReport, renderReport, type BenchResults, type ProfileSummary } from './report.ts';
import { benchSteering } from './steering.ts';
import { benchConcurrency } from './concurrency.ts';
import { benchDiscordSections } from './discord-report.ts';
import { benchMultiProcess } from './multi-process.ts';
import { benchStopBreakdown } from './stop-breakdown.ts';
import { benchWorkflowFires } from './workflow-fires.ts';
import { benchFrontDesk } from './front-desk.ts';
import { benchPromptCache } from './prompt-cache.ts';
import { benchQuickAnswers } from './quick-answers.ts';
import type { WorkflowFiresResult } from './workflow-report.ts';
import { openWorld } from './world.ts';

const OUT = join(import.meta.dirname, 'out');

async function main(): Promise<void> {
  const started = performance.now();
  const profile = readProfile(process.argv.slice(2), process.env);
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
  const warnings = countWarnings(log);
  mkdirSync(OUT, { recursive: true });
  const rowsFile = join(OUT, 'rows.jsonl');
  const env = await readEnvironment();
  writeFileSync(rowsFile, `${JSON.stringify({ section: 'environment', profile, env })}\n`);
  const emit = (r: object) => appendFileSync(rowsFile, `${JSON.stringify(r)}\n`);
  if (process.env['BENCH_ONLY'] === 'workflows') {
    const section = await benchWorkflowFires({ log });
    for (const r of section.rows) emit(r);
    env.load.end = loadavg()[0] ?? NaN;
    const report = [
      '# Steward benchmarks: recurring workflows (BENCH_ONLY=workflows)',
      '',
      ...environmentLines(env),
      '',
      ...section.markdown,
    ];
    writeFileSync(join(OUT, 'report-workflows.md'), `${report.join('\n')}\n`);
    process.stdout.write(`${report.join('\n')}\n`);
    return;
  }
  log(
    `${profile.name} profile: scale ${profile.scale}, ${profile.rounds} rounds; starting the fake LLM, MCP servers and PostgreSQL`,
  );

  const world = await openWorld({ scale: profile.scale, seed: profile.seed });
  if (process.env['BENCH_ONLY'] === 'estimates') {
    try {
      const section = await benchEstimates(world, { rounds: profile.rounds + 1, onRow: emit, log });
      env.load.end = loadavg()[0] ?? NaN;
      const report = ['# Steward benchmarks: estimates (BENCH_ONLY=estimates)', '', ...environmentLines(env), ''];
      report.push(...section.markdown);
      writeFileSync(join(OUT, 'report-estimates.md'), `${report.join('\n')}\n`);
      process.stdout.write(`${report.join('\n')}\n`);
    } finally {
      await world.close();
    }
    return;
  }
  if (process.env['BENCH_ONLY'] === 'frontdesk') {
    try {
      const section = await benchFrontDesk(world, {
        rounds: profile.rounds + 1,
        scale: profile.scale,
        onRow: emit,
        log,
      });
      env.load.end = loadavg()[0] ?? NaN;
      const report = ['# Steward benchmarks: the front desk (BENCH_ONLY=frontdesk)', '', ...environmentLines(env), ''];
      report.push(...section.markdown);
      writeFileSync(join(OUT, 'report-frontdesk.md'), `${report.join('\n')}\n`);
      process.stdout.write(`${report.join('\n')}\n`);
    } finally {
      await world.close();
    }
    return;
  }
  if (process.env['BENCH_ONLY'] === 'cache') {
    try {
      const section = await benchPromptCache(world, {
        rounds: profile.rounds + 1,
        scale: profile.scale,
        onRow: emit,
        log,
      });
      env.load.end = loadavg()[0] ?? NaN;
      const report = ['# Steward benchmarks: prompt caching (BENCH_ONLY=cache)', '', ...environmentLines(env), ''];
      report.push(...section.markdown);
      writeFileSync(join(OUT, 'report-cache.md'), `${report.join('\n')}\n`);
      process.stdout.write(`${report.join('\n')}\n`);
    } finally {
      await world.close();
    }
    return;
  }
  if (process.env['BENCH_ONLY'] === 'quick') {
    try {
      const quick = await benchQuickAnswers(world, { rounds: quickRounds(profile.rounds), onRow: emit, log });
      env.load.end = loadavg()[0] ?? NaN;
      const report = ['# Steward benchmarks: quick answers (BENCH_ONLY=quick)', '', ...environmentLines(env), ''];
      report.push(...quick.markdown);
      writeFileSync(join(OUT, 'report-quick.md'), `${report.join('\n')}\n`);
      process.stdout.write(`${report.join('\n')}\n`);
    } finally {
      await world.close();
    }
    return;
  }
  const peerOnly = process.env['BENCH_ONLY'] === 'peer';
  const profiles: ProfileSummary[] = [];
  let results;
  let quickSection: Awaited<ReturnType<typeof benchQuickAnswers>> | undefined;
  try {
    log('planner prompt with 20 and 500 tools connected');
    const catalog = benchCatalogSize(world.host.listTools(), world.tasks);
    for (const r of catalog.rows) emit(r);
    log('against LangGraph');
    const peer = await benchAgainstPeer(world, { rounds: profile.rounds, scale: profile.scale, onRow: emit, log });
    if (peerOnly) {
      env.load.end = loadavg()[0] ?? NaN;
      const report = renderPeerReport({ profile, env, durationS: (performance.now() - started) / 1000, peer });
      writeFileSync(join(OUT, 'report-peer.md'), report);
      process.stdout.write(report);
      return;
    }
    const reactRows = await benchAgainstReact(world, { rounds: profile.rounds, onRow: emit, log });
    log('429 run');
    const limitedRows = await benchRateLimited(world, { ...profile.rateLimit, onRow: emit });
    log('CPU profile of one plan-execute pass');
    const pass = await profileCpu(() => runPass(world, 'plan-execute', 2000, 2));
    profiles.push(
      summary(
        `one plan-execute run of every other task (${pass.result} runs) through \`Steward\` (PostgreSQL, real MCP servers, fake LLM in its own process)`,
        pass.profile,
        pass.result,
        'per run',
      ),
    );
    log('dispatcher overhead');
    const overhead = await benchOverhead({ rounds: profile.overheadRounds, tools: world.host, onRow: emit });
    const chains = 10;
    const driver = await profileCpu(() => driverChains(new PgRunStore(world.db.db), chains));
    profiles.push(
      summary(
        `${chains} runs of a 50-step chain through the RunDriver on PostgreSQL, tools answering at once`,
        driver.profile,
        chains * 50,
        'per step',
      ),
    );
    log('section 9: quick answers against the plan path');
    quickSection = await benchQuickAnswers(world, { rounds: quickRounds(profile.rounds), onRow: emit, log });
    results = { reactRows, peer, limitedRows, overhead, catalog };
  } finally {
    await world.close();
  }
  log('Pause and Stop');
  const steering = await benchSteering(profile.steeringRounds);
  for (const line of steering) emit({ section: 'steering', line });
  // Section 8 before the Slack sections, on a machine not yet warmed by them; its targets join the table.
  log('section 8: workflow schedules due at one instant');
  const workflows = await benchWorkflowFires({ log });
  for (const r of workflows.rows) emit(r);
  env.load.end = loadavg()[0] ?? NaN;
  // Sections 4-7 go through the Slack adapter, 5 and 6 also through the Discord one; BENCH_SECTIONS=none leaves them out.
  const slackSections: string[] = [];
  if (process.env['BENCH_SECTIONS'] !== 'none') {
    log('sections 4-6: Stop breakdown, concurrent runs, button acknowledgements through the Slack adapter');
    for (const section of [await benchStopBreakdown(profile.name), await benchConcurrency(profile.name)]) {
      slackSections.push(...section.markdown, '');
      for (const row of section.rows) emit(row);
    }
    log('sections 5 and 6 through the Discord adapter');
    const discord = await benchDiscordSections(profile.name);
    slackSections.push(...discord.markdown, '');
    for (const row of discord.rows) emit(row);
    log('section 7: several processes on one database');
    const multi = await benchMultiProcess(profile.name, log);
    slackSections.push(...multi.markdown, '');
    for (const row of multi.rows) emit(row);
  }
  const all: BenchResults & { workflows: WorkflowFiresResult } = {
    profile,
    env,
    durationS: (performance.now() - started) / 1000,
    ...results,
    profiles,
    steering,
    slackSections: slackSections.length > 0 ? slackSections : undefined,
    warnings: Object.fromEntries(warnings),
    workflows: workflows.result,
  };
  const quick = quickSection ? `\n${quickSection.markdown.join('\n')}\n` : '';
  const report = `${renderReport(all)}\n${workflows.markdown.join('\n')}\n${quick}`;
  writeFileSync(join(OUT, 'report.md'), report);
  process.stdout.write(report);
}

/**
 * Counts process warnings instead of printing each: the MCP SDK's Streamable HTTP transport trips
 * MaxListenersExceededWarning once per call past 1,500 listeners, which would bury the report. The first of each
 * kind is logged, the counts go into the report.
 */
function countWarnings(log: (line: string) => void): Map<string, number> {
  const counts = new Map<string, number>();
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    const n = (counts.get(w.name) ?? 0) + 1;
    counts.set(w.name, n);
    if (n === 1) log(`${w.name}: ${w.message} (later ones are counted in the report)`);
  });
  return counts;
}

/** Rounds of section 9: its runs take a fraction of a second each, so it takes several times the profile's. */
function quickRounds(rounds: number): number {
  return rounds * 5;
}

function summary(what: string, profile: Parameters<typeof busyMs>[0], per: number, unit: string): ProfileSummary {
  return { what, busyMs: busyMs(profile), per, unit, self: topSelf(profile, 12), inclusive: topInclusive(profile, 10) };
}

await main();

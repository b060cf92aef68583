/**
 * Sections 4 to 6 of the bench on their own: `node --import tsx bench/sections-4-6.ts [--full]` (add --expose-gc for
 * memory per run). Prints the Markdown; raw rows go to bench/out/sections-4-6.jsonl. BENCH_SECTIONS picks among 4
 * (Stop breakdown), 5 (sections 5 and 6 on Slack), d (sections 5 and 6 on Discord) and 7 (several processes on one
 * database), e.g. `BENCH_SECTIONS=d`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchConcurrency } from './concurrency.ts';
import { benchDiscordSections } from './discord-report.ts';
import { benchMultiProcess } from './multi-process.ts';
import { benchStopBreakdown } from './stop-breakdown.ts';

const profile = process.argv.includes('--full') || process.env['BENCH_PROFILE'] === 'full' ? 'full' : 'quick';
const only = process.env['BENCH_SECTIONS']?.split(',') ?? ['4', '5', 'd'];
const started = performance.now();
const markdown: string[] = [];
const rows: Record<string, unknown>[] = [];
if (only.includes('4')) {
  const s4 = await benchStopBreakdown(profile);
  markdown.push(...s4.markdown, '');
  rows.push(...s4.rows);
}
if (only.includes('5')) {
  const s56 = await benchConcurrency(profile);
  markdown.push(...s56.markdown, '');
  rows.push(...s56.rows);
}
if (only.includes('d')) {
  const sd = await benchDiscordSections(profile);
  markdown.push(...sd.markdown, '');
  rows.push(...sd.rows);
}
if (only.includes('7')) {
  const s7 = await benchMultiProcess(profile, (line) => process.stderr.write(`bench: ${line}\n`));
  markdown.push(...s7.markdown, '');
  rows.push(...s7.rows);
}
const out = join(import.meta.dirname, 'out');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'sections-4-6.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
process.stdout.write(
  `${markdown.join('\n')}\n_${profile} profile, ${((performance.now() - started) / 1000).toFixed(0)} s._\n`,
);

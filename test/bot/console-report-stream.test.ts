import { describe, expect, it } from 'vitest';
import { consoleReportStream } from '../../src/bot/console-report-stream.ts';
import type { Report } from '../../src/engine/messages.ts';

function createConsole() {
  const out: string[] = [];
  const whole: Report[] = [];
  const shown: Report[] = [];
  const stream = consoleReportStream({
    status: 'completed',
    write: (t) => void out.push(t),
    whole: (r) => (whole.push(r), Promise.resolve()),
    shown: (r) => void shown.push(r),
  });
  return { stream, out, whole, shown };
}

const report = (text: string): Report => ({ kind: 'report', runId: 'r1', status: 'completed', text });

describe('a report on the console while it is written', () => {
  it('prints the heading with the first words, each piece as it comes, and closes when that was the report', async () => {
    const c = createConsole();
    c.stream.append('All ');
    expect(c.out.join('')).toBe('\n=== Report (completed) ===\nAll ');
    c.stream.append('done.');
    await c.stream.finish(report('All done.'));
    expect(c.out.join('')).toBe('\n=== Report (completed) ===\nAll done.\n\n');
    expect(c.whole).toEqual([]);
    expect(c.shown).toEqual([report('All done.')]);
  });

  it('prints the stored report whole after the words when they were not the report', async () => {
    const c = createConsole();
    c.stream.append('All th');
    await c.stream.finish(report('Run completed. (The report writer failed …)'));
    expect(c.out.join('')).toContain('All th\n! The text above is not the final report; here it is.');
    expect(c.whole).toEqual([report('Run completed. (The report writer failed …)')]);
  });

  it('prints the report whole, as before, when no word came', async () => {
    const c = createConsole();
    await c.stream.finish(report('Plain.'));
    expect(c.out).toEqual([]);
    expect(c.whole).toEqual([report('Plain.')]);
  });

  it('keeps an emoji split across pieces whole, and makes terminal controls inert', async () => {
    const c = createConsole();
    const rocket = '🚀';
    c.stream.append(`go ${rocket[0]!}`);
    c.stream.append(`${rocket[1]!} \x1b[2J`);
    await c.stream.finish(report(`go ${rocket} \x1b[2J`));
    expect(c.out.join('')).toContain(`go ${rocket} \\x1b[2J`);
    expect(c.whole).toEqual([]);
  });
});

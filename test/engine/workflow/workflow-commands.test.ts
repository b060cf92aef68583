import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isWorkflowCommand,
  parseWorkflowCommand,
  startsLikeWorkflowCommand,
  WORKFLOW_NAME,
  type WorkflowCommand,
} from '../../../src/engine/workflow/workflow-commands.ts';

function parsed(text: string): WorkflowCommand {
  const r = parseWorkflowCommand(text);
  if (!r.ok) throw new Error(`refused: ${r.error}`);
  return r.value;
}

function refusal(text: string): string {
  const r = parseWorkflowCommand(text);
  if (r.ok) throw new Error(`parsed: ${JSON.stringify(r.value)}`);
  return r.error;
}

describe('which lines are workflow commands', () => {
  it('takes a line whose first word is save, workflows, workflow, fork or schedule, in any case', () => {
    for (const text of ['save digest', 'workflows', '  Workflow digest', 'FORK a b', 'schedule\tdigest pause']) {
      expect(isWorkflowCommand(text)).toBe(true);
    }
  });

  it('leaves other requests to the planner, including words that only start like a command word', () => {
    for (const text of ['', '   ', 'summarise the news', 'saved searches please', 'workflows?', 'scheduler status']) {
      expect(isWorkflowCommand(text)).toBe(false);
    }
  });

  it('a request that starts with save, schedule or fork but is no command goes to the planner', () => {
    for (const text of ['schedule a call with Bob tomorrow', 'save this page to my notes', 'fork the repo steward']) {
      expect(startsLikeWorkflowCommand(text)).toBe(true);
      expect(isWorkflowCommand(text)).toBe(false);
    }
    // A mistyped `workflow …` line is still answered as a command, with what is wrong.
    expect(isWorkflowCommand('workflow digest frobnicate')).toBe(true);
  });
});

describe('save, workflows, workflow, fork', () => {
  it('saves under a name stored lower-case, optionally approving at every fire', () => {
    expect(parsed('save Weekly-Digest')).toEqual({ kind: 'save', name: 'weekly-digest', everyFire: false });
    expect(parsed('save digest every-fire')).toEqual({ kind: 'save', name: 'digest', everyFire: true });
  });

  it('lists, shows, and shows an older version', () => {
    expect(parsed('workflows')).toEqual({ kind: 'list' });
    expect(parsed('workflow digest')).toEqual({ kind: 'show', name: 'digest', version: null });
    expect(parsed('workflow digest version 2')).toEqual({ kind: 'show', name: 'digest', version: 2 });
  });

  it('runs now, deletes, sets the review mode, forks', () => {
    expect(parsed('workflow digest run')).toEqual({ kind: 'runNow', name: 'digest' });
    expect(parsed('workflow digest delete')).toEqual({ kind: 'delete', name: 'digest' });
    expect(parsed('workflow digest review every-fire')).toEqual({
      kind: 'review',
      name: 'digest',
      review: 'every_fire',
    });
    expect(parsed('workflow digest review SAVED')).toEqual({ kind: 'review', name: 'digest', review: 'saved' });
    expect(parsed('fork digest digest_2')).toEqual({ kind: 'fork', name: 'digest', newName: 'digest_2' });
  });

  it('keeps the JSON of an edit as typed, across lines, for the flow to parse', () => {
    const json = '{"steps": [\n  {"id": "a", "tool": "srv.echo", "args": {"text": "two  spaces"}}\n]}';
    expect(parsed(`workflow digest edit ${json}`)).toEqual({ kind: 'edit', name: 'digest', json });
  });

  it("keeps an amendment's words", () => {
    expect(parsed('workflow digest amend also post it to #news')).toEqual({
      kind: 'amend',
      name: 'digest',
      text: 'also post it to #news',
    });
  });

  it('refuses a missing or malformed name, saying the rule', () => {
    expect(refusal('save')).toBe('Name the workflow: save <name> [every-fire]');
    expect(refusal('save 2024-digest')).toContain('"2024-digest" is not a workflow name: a name is a letter');
    expect(refusal('save ' + 'a'.repeat(41))).toContain('is not a workflow name');
    expect(WORKFLOW_NAME.test('a'.repeat(40))).toBe(true);
    expect(refusal('fork digest')).toBe('Name the new workflow: fork <name> <new name>');
    expect(refusal('fork digest Digest')).toContain('The new name must differ from "digest"');
  });

  it('refuses extra and unknown words with the expected form', () => {
    expect(refusal('workflows please')).toBe('Unexpected "please": the form is workflows');
    expect(refusal('save digest every-fire now')).toBe('Unexpected "now": the form is save <name> [every-fire]');
    expect(refusal('save digest always')).toBe('Unexpected "always": the form is save <name> [every-fire]');
    expect(refusal('workflow digest run twice')).toContain('workflow <name> run');
    expect(refusal('workflow digest delete all')).toContain('workflow <name> delete');
    expect(refusal('fork a b c')).toContain('fork <name> <new name>');
    expect(refusal('workflow digest launch')).toContain('"launch" is not a workflow action: after workflow digest say');
    expect(refusal('workflow digest version two')).toContain('Give the version as a number');
    expect(refusal('workflow digest version 0')).toContain('Give the version as a number');
    expect(refusal('workflow digest version 2 please')).toContain('workflow <name> [version <n>]');
    expect(refusal('workflow digest review sometimes')).toBe(
      'Say every-fire or saved: workflow <name> review every-fire|saved',
    );
    expect(refusal('workflow digest edit')).toContain("Give the plan's JSON after edit");
    expect(refusal('workflow digest amend   ')).toContain('Say what to change after amend');
    expect(refusal('workflow')).toContain('Name the workflow');
    expect(refusal('hello there')).toContain('not a workflow command');
  });
});

describe('schedule', () => {
  const base = { kind: 'schedule', name: 'digest', cron: '0 9 * * MON' } as const;

  it('adds a schedule with a quoted cron expression, a zone, and the default policies', () => {
    expect(parsed('schedule digest "0 9 * * MON" Europe/Berlin')).toEqual({
      ...base,
      timeZone: 'Europe/Berlin',
      catchUp: 'once',
      overlap: 'skip',
    });
  });

  it('leaves the zone to the default when none is given', () => {
    expect(parsed("schedule digest '0 9 * * MON'")).toMatchObject({ timeZone: null, catchUp: 'once', overlap: 'skip' });
  });

  it('reads the typographic quotes Slack and phones put in, and normalises the spacing inside', () => {
    for (const quotedCron of ['“0 9 * * MON”', '‘0 9 * * MON’', '„0 9 * * MON“', '“0  9\u00a0* * MON ”']) {
      expect(parsed(`schedule digest ${quotedCron} UTC`)).toMatchObject({ ...base, timeZone: 'UTC' });
    }
  });

  it('takes catch-up and overlap in any order after the zone', () => {
    const want = { timeZone: 'America/New_York', catchUp: 'skip', overlap: 'queue' };
    expect(parsed('schedule digest "0 9 * * MON" America/New_York catch-up skip overlap queue')).toMatchObject(want);
    expect(parsed('schedule digest "0 9 * * MON" America/New_York OVERLAP queue catch-up skip')).toMatchObject(want);
    expect(parsed('schedule digest "0 9 * * MON" overlap queue')).toMatchObject({ timeZone: null, overlap: 'queue' });
  });

  it('pauses, resumes and deletes all schedules or the n-th', () => {
    expect(parsed('schedule digest pause')).toEqual({
      kind: 'scheduleSet',
      name: 'digest',
      action: 'pause',
      index: null,
    });
    expect(parsed('schedule digest resume 2')).toEqual({
      kind: 'scheduleSet',
      name: 'digest',
      action: 'resume',
      index: 2,
    });
    expect(parsed('schedule digest delete 1')).toEqual({
      kind: 'scheduleSet',
      name: 'digest',
      action: 'delete',
      index: 1,
    });
  });

  it('refuses an unquoted cron expression with an example', () => {
    expect(refusal('schedule digest 0 9 * * MON Europe/Berlin')).toBe(
      'Put the cron expression in quotes, as in: schedule digest "0 9 * * MON" Europe/Berlin (or schedule <name> pause|resume|delete [<n>])',
    );
    expect(refusal('schedule digest')).toBe(
      'Give the cron expression, in quotes: schedule digest "0 9 * * MON" Europe/Berlin',
    );
    expect(refusal('schedule "0 9 * * MON" digest')).toContain('Name the workflow before the cron expression');
  });

  it('refuses a quote that never closes, an empty or overlong expression', () => {
    expect(refusal('schedule digest "0 9 * * MON Europe/Berlin')).toContain(
      "The cron expression's quote is never closed",
    );
    expect(refusal('schedule digest "  " UTC')).toContain('The cron expression is empty');
    expect(refusal(`schedule digest "${'1 '.repeat(150)}"`)).toBe('A cron expression is at most 200 characters.');
  });

  it('refuses a malformed zone, unknown words, and bad or repeated policies', () => {
    expect(refusal('schedule digest "0 9 * * MON" +01:00')).toContain('"+01:00" is not a time zone: use an IANA name');
    expect(refusal('schedule digest "0 9 * * MON" UTC every week')).toContain(
      'Unexpected "every": the form is schedule',
    );
    expect(refusal('schedule digest "0 9 * * MON" UTC Europe/Berlin')).toContain('Unexpected "Europe/Berlin"');
    expect(refusal('schedule digest "0 9 * * MON" catch-up always')).toBe('catch-up is once or skip, not "always".');
    expect(refusal('schedule digest "0 9 * * MON" overlap')).toBe('overlap is skip or queue.');
    expect(refusal('schedule digest "0 9 * * MON" overlap skip overlap queue')).toBe('overlap is given twice.');
    expect(refusal('schedule digest pause first')).toContain(`Give the schedule's number as listed by workflows`);
    expect(refusal('schedule digest pause 1 2')).toContain('Unexpected "2"');
  });
});

describe('hostile input', () => {
  it('gives a short refusal for a 100 KB line, control characters, and a quote that never closes', () => {
    const cases = [
      `schedule digest "${'* '.repeat(50_000)}`,
      `save ${'x'.repeat(100_000)}`,
      `workflow digest ${'frob '.repeat(20_000)}`,
      `schedule digest "0 9 * * MON" ${'overlap skip '.repeat(10_000)}`,
      'save digest\u0007',
      'workflow digest amend ring\u0000the bell',
      'x'.repeat(1_000_000),
      `workflow digest amend ${'more '.repeat(2000)}`,
    ];
    for (const text of cases) expect(refusal(text).length).toBeLessThan(250);
  });

  it('never throws: any string either parses or is refused with a sentence', () => {
    const words = fc.constantFrom(
      'save',
      'workflows',
      'workflow',
      'fork',
      'schedule',
      'pause',
      'edit',
      'amend',
      'version',
      'review',
      'catch-up',
      'overlap',
      'once',
      'skip',
      'queue',
      'every-fire',
      '"',
      '“',
      '„',
      "'",
      '’',
      '1',
    );
    const line = fc
      .array(fc.oneof(words, fc.string(), fc.string({ unit: 'grapheme' })), { maxLength: 12 })
      .map((w) => w.join(' '));
    fc.assert(
      fc.property(fc.oneof(line, fc.string({ unit: 'binary' })), (text) => {
        const r = parseWorkflowCommand(text);
        if (r.ok) expect(typeof r.value.kind).toBe('string');
        else expect(r.error).toMatch(/\S/);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads any valid schedule back whatever the order of its policies', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9_-]{0,39}$/);
    fc.assert(
      fc.property(
        name,
        fc.constantFrom('once', 'skip'),
        fc.constantFrom('skip', 'queue'),
        fc.boolean(),
        (n, c, o, swap) => {
          const options = swap ? `overlap ${o} catch-up ${c}` : `catch-up ${c} overlap ${o}`;
          expect(parsed(`schedule ${n.toUpperCase()} "*/5 * * * *" Asia/Tokyo ${options}`)).toEqual({
            kind: 'schedule',
            name: n,
            cron: '*/5 * * * *',
            timeZone: 'Asia/Tokyo',
            catchUp: c,
            overlap: o,
          });
        },
      ),
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { StoredFire, StoredSchedule, StoredWorkflow, WorkflowVersion } from '../../../src/engine/workflows.ts';
import {
  describeFire,
  describeScheduled,
  describeWorkflow,
  describeWorkflowList,
  WORKFLOW_HELP,
} from '../../../src/engine/workflow/workflow-text.ts';
import { createPlan } from '../fixtures.ts';

const ada = { id: 'U0ADA', name: 'Ada', channel: 'slack' };

function createWorkflow(overrides: Partial<StoredWorkflow> = {}): StoredWorkflow {
  return {
    id: 'w1',
    name: 'digest',
    owner: ada,
    conversation: { channel: 'slack', key: 'C1:1.0' },
    review: 'saved',
    version: 1,
    createdAt: new Date('2026-11-01T10:00:00Z'),
    ...overrides,
  };
}

function createVersion(overrides: Partial<WorkflowVersion> = {}): WorkflowVersion {
  return {
    workflowId: 'w1',
    version: 1,
    plan: createPlan([{ id: 'fetch', tool: 'news.search', args: { since: { $ref: 'fire.previousTime' } } }], {
      summary: 'Weekly news digest',
    }),
    pins: [],
    risk: 'low',
    note: 'saved from run r1',
    sourceRunId: 'r1',
    createdBy: ada,
    createdAt: new Date('2026-11-01T10:00:00Z'),
    ...overrides,
  };
}

function createSchedule(overrides: Partial<StoredSchedule> = {}): StoredSchedule {
  return {
    id: 's1',
    workflowId: 'w1',
    cron: '0 9 * * MON',
    timeZone: 'Europe/Berlin',
    catchUp: 'once',
    overlap: 'skip',
    paused: false,
    nextFireAt: new Date('2026-12-07T08:00:00Z'),
    createdAt: new Date('2026-11-01T10:00:00Z'),
    ...overrides,
  };
}

function createFire(overrides: Partial<StoredFire> = {}): StoredFire {
  return {
    id: 'f1',
    workflowId: 'w1',
    scheduleId: 's1',
    version: 1,
    scheduledAt: new Date('2026-11-30T08:00:00Z'),
    startedAt: new Date('2026-11-30T08:00:02Z'),
    outcome: 'started',
    note: '',
    runId: 'r9',
    runStatus: 'completed',
    ...overrides,
  };
}

const lines = (text: string): string[] => text.split('\n');

describe('the help', () => {
  it('lists each command form on its own line', () => {
    expect(lines(WORKFLOW_HELP)).toContain(
      '  workflows — list workflows with their versions, schedules, next fire and last results',
    );
    expect(WORKFLOW_HELP).toContain('schedule <name> "<cron>" [<time zone>] [catch-up once|skip] [overlap skip|queue]');
    expect(lines(WORKFLOW_HELP)).toHaveLength(12);
  });
});

describe('the list of workflows', () => {
  it('says how to start when there are none', () => {
    expect(describeWorkflowList([])).toContain('save <name>');
  });

  it('shows per workflow its version, review mode, owner, schedules with their next fire, and the last fire', () => {
    const text = describeWorkflowList([
      {
        workflow: createWorkflow({ version: 3 }),
        schedules: [createSchedule(), createSchedule({ id: 's2', cron: '0 18 * * *', timeZone: 'UTC', paused: true })],
        lastFire: createFire({ version: 3 }),
      },
      { workflow: createWorkflow({ name: 'audit', review: 'every_fire' }), schedules: [], lastFire: null },
    ]);
    expect(lines(text)).toEqual(
      expect.arrayContaining([
        'digest, version 3: runs on the approval given at save; owner Ada',
        '  schedule 1: `0 9 * * MON` in Europe/Berlin, next Mon 2026-12-07 09:00',
        '  schedule 2: `0 18 * * *` in UTC, paused',
        '  last fire: Mon 2026-11-30 09:00, version 3: started a run at 09:00:02 (2 s late); run finished',
        'audit, version 1: waits for approval at every fire; owner Ada',
        '  no schedule (run it now with: workflow audit run)',
        '  not fired yet',
      ]),
    );
  });

  it('shows fire times in UTC for a workflow without schedules, and a schedule that never fires again', () => {
    const text = describeWorkflowList([
      {
        workflow: createWorkflow(),
        schedules: [],
        lastFire: createFire({ scheduleId: null, outcome: 'started', startedAt: new Date('2026-11-30T08:00:00Z') }),
      },
      { workflow: createWorkflow({ name: 'once' }), schedules: [createSchedule({ nextFireAt: null })], lastFire: null },
    ]);
    expect(text).toContain('  last fire: Mon 2026-11-30 08:00 (run now), version 1: started a run; run finished');
    expect(text).toContain('  schedule 1: `0 9 * * MON` in Europe/Berlin, no fire times ahead');
  });
});

describe('one workflow in full', () => {
  const versions = [
    createVersion(),
    createVersion({ version: 2, note: 'edited by Ada', createdAt: new Date('2026-11-10T12:30:00Z') }),
  ];

  it("shows the shown version's steps with parameters as written, the values it uses, versions, schedules, fires", () => {
    const text = describeWorkflow({
      workflow: createWorkflow({ version: 2 }),
      shown: versions[1] as WorkflowVersion,
      versions,
      schedules: [createSchedule({ overlap: 'queue' })],
      fires: [
        createFire({
          version: 2,
          outcome: 'held',
          note: 'news.search changed its description',
          runStatus: 'awaiting_review',
        }),
      ],
      params: ['fire.previousTime'],
    });
    expect(lines(text)).toEqual(
      expect.arrayContaining([
        'Workflow digest, version 2 (current): runs on the approval given at save; owner Ada; approved at low risk.',
        'Plan: Weekly news digest',
        '  1. fetch: news.search {"since":{"$ref":"fire.previousTime"}}',
        'Built-in values it uses: fire.previousTime',
        'Versions (times in Europe/Berlin):',
        '  version 1, Sun 2026-11-01 11:00: saved from run r1',
        '  version 2 (current), Tue 2026-11-10 13:30: edited by Ada',
        '  1. `0 9 * * MON` in Europe/Berlin (missed fires: run once if less than a period late; overlapping fires: queued until the running one ends), next Mon 2026-12-07 09:00',
        '  Mon 2026-11-30 09:00, version 2: held for review at 09:00:02 (2 s late): news.search changed its description; run waiting for review',
      ]),
    );
  });

  it('says when an older version is shown, and shows conditions, model calls and dependencies', () => {
    const plan = createPlan([
      { id: 'fetch', tool: 'news.search', args: { q: 'x'.repeat(500) } },
      { id: 'sum', kind: 'llm', dependsOn: ['fetch'], args: { prompt: 'Summarise' } },
      {
        id: 'check',
        kind: 'condition',
        dependsOn: ['sum'],
        expression: 'steps.sum.output.text != ""',
        ifTrue: ['post'],
      },
      { id: 'post', tool: 'chat.post', dependsOn: ['check'], optional: true },
    ]);
    const text = describeWorkflow({
      workflow: createWorkflow({ version: 2 }),
      shown: createVersion({ plan }),
      versions,
      schedules: [],
      fires: [],
      params: [],
    });
    expect(text).toContain('Workflow digest, version 1 (the current version is 2)');
    expect(text).toMatch(/ {2}1\. fetch: news\.search \{"q":"x+… \[\d+ more characters not shown\]\n/);
    expect(text).toContain('  2. sum (after fetch): model call {"prompt":"Summarise"}');
    expect(text).toContain('  3. check (after sum): if steps.sum.output.text != "" then post, else nothing');
    expect(text).toContain('  4. post (after check) (optional): chat.post {}');
    expect(text).toContain('Built-in values it uses: none');
    expect(text).toContain('Versions (times in UTC):');
    expect(text).toContain('  none (add one with: schedule digest "0 9 * * MON" Europe/Berlin)');
    expect(text).toContain('Not fired yet.');
  });

  it('shows the latest 10 fires and the latest 20 versions, saying how many older ones there are', () => {
    const many = Array.from({ length: 25 }, (_, i) => createVersion({ version: i + 1, note: `edit ${i + 1}` }));
    const fires = Array.from({ length: 15 }, (_, i) => createFire({ id: `f${i}`, version: 25 - i }));
    const text = describeWorkflow({
      workflow: createWorkflow({ version: 25 }),
      shown: many[24] as WorkflowVersion,
      versions: many,
      schedules: [createSchedule()],
      fires,
      params: [],
    });
    expect(text).toContain('  … 5 older (workflow digest version <n> shows one)');
    expect(text).not.toContain(': edit 5\n');
    expect(text).toContain(': edit 6\n');
    expect(text.match(/, version \d+: started a run/g)).toHaveLength(10);
    expect(text).toContain('version 25: started a run');
    expect(text).not.toContain('version 15: started a run');
  });
});

describe('a new schedule', () => {
  it('says the expression, zone, policies and the next three fires in the zone', () => {
    const next = ['2026-12-07', '2026-12-14', '2026-12-21'].map((d) => new Date(`${d}T08:00:00Z`));
    expect(describeScheduled('digest', createSchedule(), next)).toBe(
      'Scheduled digest: `0 9 * * MON` in Europe/Berlin (missed fires: run once if less than a period late; ' +
        'overlapping fires: skipped). Next: Mon 2026-12-07 09:00, Mon 2026-12-14 09:00, Mon 2026-12-21 09:00.',
    );
  });

  it('says when a schedule has no fire times ahead or is paused', () => {
    const text = describeScheduled('digest', createSchedule({ catchUp: 'skip', paused: true }), []);
    expect(text).toContain('missed fires: skipped');
    expect(text).toContain('It has no fire times ahead. It is paused.');
  });
});

describe('one fire', () => {
  it('names the zone of its times and says its lateness and outcome in words', () => {
    const late = createFire({ startedAt: new Date('2026-11-30T11:30:00Z') });
    expect(describeFire(late, 'Europe/Berlin')).toBe(
      'Mon 2026-11-30 09:00 Europe/Berlin, version 1: started a run at 12:30 (3 h 30 min late); run finished',
    );
    const minutes = createFire({ startedAt: new Date('2026-11-30T08:12:20Z') });
    expect(describeFire(minutes, 'UTC')).toContain('started a run at 08:12:20 (12 min late)');
    const days = createFire({ startedAt: new Date('2026-12-03T08:00:00Z') });
    expect(describeFire(days, 'UTC')).toContain('(3 days late)');
    const nextDay = createFire({ startedAt: new Date('2026-12-01T09:00:00Z'), runStatus: 'failed' });
    expect(describeFire(nextDay, 'UTC')).toContain('started a run at Tue 2026-12-01 09:00 (25 h late); run failed');
  });

  it('says why a fire was skipped, without a run', () => {
    const missed = createFire({ outcome: 'skipped_missed', note: '3 fires missed', runId: null, runStatus: null });
    expect(describeFire(missed, 'UTC')).toBe('Mon 2026-11-30 08:00 UTC, version 1: skipped as missed: 3 fires missed');
    const overlap = createFire({ outcome: 'skipped_overlap', runId: null, runStatus: null });
    expect(describeFire(overlap, 'UTC')).toContain('skipped, the previous fire was still running');
  });

  it("cuts a long note from a tool's change and keeps a zone this machine does not know readable", () => {
    const held = createFire({ outcome: 'held', note: 'changed: '.repeat(100), runStatus: 'awaiting_review' });
    expect(describeFire(held, 'UTC')).toMatch(/more characters not shown\]; run waiting for review$/);
    expect(describeFire(createFire(), 'Mars/Olympus_Mons')).toContain('Mon 2026-11-30 08:00 UTC');
  });
});

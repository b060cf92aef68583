/** Fixture builders for store tests: sensible defaults, overrides for what a test is about. */
import { randomUUID } from 'node:crypto';
import type { Plan } from '../../src/engine/plan/plan-schema.ts';
import type { RunStore } from '../../src/engine/ports.ts';

type NewRun = Parameters<RunStore['createRun']>[0];

/** A run as the bot would create it from a mention; each call gets a new id. */
export function createNewRun(overrides: Partial<NewRun> = {}): NewRun {
  return {
    id: `run_${randomUUID()}`,
    conversation: { channel: 'slack', key: 'C123:1700000000.000100' },
    requester: { id: 'U42', name: 'Ada', channel: 'slack' },
    request: 'List the files in /tmp and summarize them',
    at: new Date('2026-11-30T10:00:00.000Z'),
    ...overrides,
  };
}

/** A whole plan to save as a revision: every field written out, two steps with nested JSON in their arguments. */
export function createRevisionPlan(overrides: Partial<Plan> = {}): Plan {
  return {
    summary: 'List files, then summarize',
    rationale: 'The filesystem server can list; a model can summarize.',
    needsTools: true,
    answer: null,
    risks: [],
    steps: [
      {
        kind: 'tool',
        id: 'list',
        tool: 'fs.list_directory',
        args: { path: '/tmp', options: { depth: 1, include: ['*.txt', '*.md'] } },
        dependsOn: [],
        description: 'List /tmp',
        optional: false,
      },
      {
        kind: 'llm',
        id: 'summary',
        args: { prompt: { $ref: 'steps.list.output.content[0].text' } },
        dependsOn: ['list'],
        description: 'Summarize the listing',
        optional: false,
      },
    ],
    ...overrides,
  };
}

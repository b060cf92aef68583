/**
 * Runs that tell a story on the run page (issue 33), stored through the real PostgreSQL run store: steps with
 * arguments, retries, a Stop, a skip and a restart; a parent run that delegated to a child run of an Assistant; and
 * a run whose step was in flight while Steward was down for ten minutes.
 */
import type { Plan } from '../../src/engine/plan/plan-schema.ts';
import type { PgRunStore } from '../../src/store/pg-run-store.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from '../store/builders.ts';
import { ADA } from './dashboard-fixtures.ts';

const T0 = Date.UTC(2026, 11, 1, 9, 0);
/** `s` seconds after the runs' start. */
export const at = (s: number) => new Date(T0 + s * 1000);
const CONVERSATION = { channel: 'slack', key: 'C1:1700000001.0001' };

/**
 * A run of four steps: `list` (fs.list_directory, a secret typed into its arguments) failed, then succeeded;
 * `publish` (wiki.create_page, a reference) was interrupted by a restart; `summary` (a model call) was stopped;
 * `mail` was skipped.
 */
export async function seedStepsRun(store: PgRunStore) {
  const run = createNewRun({
    requester: ADA,
    conversation: CONVERSATION,
    request: 'files, then a summary',
    at: at(0),
  });
  await store.createRun(run);
  const base = createRevisionPlan();
  const plan: Plan = {
    ...base,
    steps: [
      {
        kind: 'tool',
        id: 'list',
        tool: 'fs.list_directory',
        // A token a person typed into the request: never shown.
        args: { path: '/tmp', apiKey: 'sk-live-typed-by-ada', note: '<img src=x onerror=alert(1)>' },
        dependsOn: [],
        description: '',
        optional: false,
      },
      {
        kind: 'tool',
        id: 'publish',
        tool: 'wiki.create_page',
        args: { title: 'Files', body: { $ref: 'steps.list.output.content[0].text' } },
        dependsOn: ['list'],
        description: '',
        optional: false,
      },
      {
        kind: 'llm',
        id: 'summary',
        args: { prompt: { $ref: 'steps.list.output.content[0].text' } },
        dependsOn: ['list'],
        description: '',
        optional: false,
      },
      {
        kind: 'tool',
        id: 'mail',
        tool: 'mail.send',
        args: { to: 'ada@example.com', access_token: 'xoxp-typed' },
        dependsOn: ['summary'],
        description: '',
        optional: true,
      },
    ],
  };
  await store.saveRevision(run.id, 1, plan, 'planned', at(0));
  const list = { runId: run.id, stepId: 'list', revision: 1 };
  const listArgs = { path: '/tmp', apiKey: 'sk-live-typed-by-ada', note: '<img src=x onerror=alert(1)>' };
  await store.recordStepStarted({ ...list, attempt: 1, args: listArgs, at: at(1) });
  const boom = { code: 'tool_error' as const, message: 'ENOENT: no such directory', retryable: true };
  await store.recordStepEnded({
    ...list,
    attempt: 1,
    status: 'failed',
    output: null,
    error: boom,
    at: at(2),
    durationMs: 1000,
  });
  await store.recordStepStarted({ ...list, attempt: 2, args: listArgs, at: at(3) });
  const listing = { content: [{ type: 'text', text: 'a.txt <b>b.md</b>' }] };
  await store.recordStepEnded({
    ...list,
    attempt: 2,
    status: 'succeeded',
    output: listing,
    error: null,
    at: at(4),
    durationMs: 1000,
  });
  const publish = { runId: run.id, stepId: 'publish', revision: 1, attempt: 1 };
  const long = `a.txt <b>b.md</b> ${'x'.repeat(5000)}`;
  await store.recordStepStarted({ ...publish, args: { title: 'Files', body: long }, at: at(5) });
  const interrupted = {
    code: 'interrupted' as const,
    message: 'Steward stopped while this step was running',
    retryable: false,
  };
  await store.recordStepEnded({
    ...publish,
    status: 'failed',
    output: null,
    error: interrupted,
    at: at(60),
    durationMs: 0,
  });
  const summary = { runId: run.id, stepId: 'summary', revision: 1, attempt: 1 };
  await store.recordStepStarted({ ...summary, args: { prompt: 'a.txt <b>b.md</b>' }, at: at(5) });
  const stopped = { code: 'cancelled' as const, message: 'Stopped by Ada', retryable: false };
  await store.recordStepEnded({
    ...summary,
    status: 'cancelled',
    output: null,
    error: stopped,
    at: at(6),
    durationMs: 1000,
  });
  const skipped = { code: 'cancelled' as const, message: 'its dependency summary did not succeed', retryable: false };
  // Never started: its dependency was cancelled (the way the dispatcher stores a skip).
  const mail = { stepId: 'mail', attempt: 1, status: 'skipped' as const, output: null, error: skipped };
  await store.recordSteps({
    runId: run.id,
    ended: [{ ...mail, at: at(6), durationMs: 0, unstarted: { revision: 1 } }],
    started: [],
  });

  return run;
}

/** A parent run whose step `ask` delegated to a child run of the Assistant `researcher`. */
export async function seedDelegation(database: TestDatabase, store: PgRunStore) {
  const parent = createNewRun({
    requester: ADA,
    conversation: CONVERSATION,
    request: 'ask the researcher',
    at: at(100),
  });
  await store.createRun(parent);
  const task = { assistant: 'researcher', task: 'find the <b>papers</b>' };
  const delegate = { kind: 'tool' as const, id: 'ask', tool: 'steward.delegate', args: task, dependsOn: [] };
  await store.saveRevision(
    parent.id,
    1,
    { ...createRevisionPlan(), steps: [{ ...delegate, description: '', optional: false }] },
    'planned',
    at(100),
  );
  const child = createNewRun({
    requester: ADA,
    conversation: CONVERSATION,
    request: task.task,
    at: at(101),
    assistant: 'researcher',
    parentRunId: parent.id,
  });
  await database.db
    .insertInto('delegations')
    .values({
      id: `${parent.id}/ask`,
      parent_run_id: parent.id,
      child_run_id: child.id,
      conversation_channel: CONVERSATION.channel,
      conversation_key: CONVERSATION.key,
      assistant: 'researcher',
      requester_id: ADA.id,
      requester_name: ADA.name ?? null,
      requester_channel: ADA.channel,
      depth: 1,
      depth_limit: 2,
      round: 1,
      task: task.task,
      created_at: at(101),
    })
    .execute();
  await store.createRun(child);
  await store.recordStepStarted({
    runId: parent.id,
    stepId: 'ask',
    attempt: 1,
    revision: 1,
    args: task,
    at: at(101),
  });

  return { parent, child };
}

/**
 * A run whose step `slow` started at 0 s and last reported progress at 12 s while `list` ran from 0 to 20 s; Steward
 * went down after that and took the run over at 620 s, ending `slow` as interrupted; `slow` ran again from 640 to
 * 650 s.
 */
export async function seedRestartRun(store: PgRunStore) {
  const run = createNewRun({ requester: ADA, conversation: CONVERSATION, request: 'a slow job', at: at(0) });
  await store.createRun(run);
  const tool = (id: string, name: string) => ({
    kind: 'tool' as const,
    id,
    tool: name,
    args: { path: '/tmp' },
    dependsOn: [],
    description: '',
    optional: false,
  });
  const plan = { ...createRevisionPlan(), steps: [tool('slow', 'fs.slow_scan'), tool('list', 'fs.list_directory')] };
  await store.saveRevision(run.id, 1, plan, 'planned', at(0));
  const ok = { content: [{ type: 'text', text: 'ok' }] };
  const slow = { runId: run.id, stepId: 'slow', revision: 1 };
  const list = { runId: run.id, stepId: 'list', revision: 1, attempt: 1 };
  await store.recordStepStarted({ ...slow, attempt: 1, args: { path: '/tmp' }, at: at(0) });
  await store.recordStepStarted({ ...list, args: { path: '/tmp' }, at: at(0) });
  await store.recordProgress({ ...slow, attempt: 1, progress: { progress: 1, total: 4 }, at: at(12) });
  await store.recordStepEnded({
    ...list,
    status: 'succeeded',
    output: ok,
    error: null,
    at: at(20),
    durationMs: 20_000,
  });
  // Steward went down here; the process that took the run over ended `slow` as interrupted (recovery.ts).
  const error = {
    code: 'interrupted' as const,
    message: 'Steward stopped while this step was running',
    retryable: false,
  };
  await store.recordStepEnded({
    ...slow,
    attempt: 1,
    status: 'failed',
    output: null,
    error,
    at: at(620),
    durationMs: 0,
  });
  await store.appendEvent(run.id, 'recovered', { interrupted: ['slow'], retried: [], exhausted: [] }, at(620));
  await store.recordStepStarted({ ...slow, attempt: 2, args: { path: '/tmp' }, at: at(640) });
  await store.recordStepEnded({
    ...slow,
    attempt: 2,
    status: 'succeeded',
    output: ok,
    error: null,
    at: at(650),
    durationMs: 10_000,
  });
  return run;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { startDashboardServer, type DashboardServer } from '../../src/web/dashboard-server.ts';
import { createDashboardApp } from '../../src/web/dashboard-app.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { PgQuestionLog } from '../../src/store/pg-question-log.ts';
import { waitUntil } from '../helpers/wait.ts';
import { ADA, BOB, createDashboard, DAN, PUBLIC_URL, SECRET, seedRun } from './dashboard-fixtures.ts';

describe('dashboard pages', () => {
  let database: TestDatabase;
  let d: ReturnType<typeof createDashboard>;
  let dan: string;
  const ids: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    d = createDashboard(database, { pageSize: 2 });
    for (let i = 1; i <= 5; i++) {
      const requester = i % 2 ? ADA : BOB;
      const at = new Date(Date.UTC(2026, 11, 1, 8, i));
      const status = i === 3 ? 'failed' : i < 3 ? 'completed' : undefined;
      ids.push(
        await seedRun(d.store, {
          requester,
          key: `C1:17000000${i}.0001`,
          request: `job ${i}`,
          at,
          ...(status && { status }),
        }),
      );
    }
    await database.db
      .insertInto('workflows')
      .values({
        id: 'wf1',
        name: 'digest',
        owner_id: ADA.id,
        owner_channel: 'slack',
        conversation_channel: 'slack',
        conversation_key: 'C1',
        review: 'risky',
      })
      .execute();
    await database.db
      .insertInto('workflow_versions')
      .values({
        workflow_id: 'wf1',
        version: 1,
        plan: '{}',
        pins: '[]',
        risk: 'low',
        note: '',
        created_by_id: ADA.id,
        created_by_channel: 'slack',
      })
      .execute();
    const at = new Date();
    await database.db
      .insertInto('workflow_fires')
      .values({
        id: 'f1',
        workflow_id: 'wf1',
        version: 1,
        scheduled_at: at,
        started_at: at,
        outcome: 'started',
        note: '',
        run_id: ids[1]!,
        claimed_by: 'test',
      })
      .execute();
    dan = await d.signIn(DAN);
  });
  afterAll(() => database?.close());

  const requests = async (path: string) => {
    const text = await (await d.get(path, dan)).text();
    return [...text.matchAll(/<td>(job \d)<\/td>/g)].map((m) => m[1]);
  };

  it('lists runs newest first, a page at a time, with links to the next and previous pages', async () => {
    expect(await requests('/runs')).toEqual(['job 5', 'job 4']);
    const first = await (await d.get('/runs', dan)).text();
    expect(first).toContain('href="/runs?page=2"');
    expect(first).not.toContain('rel="prev"');
    expect(await requests('/runs?page=2')).toEqual(['job 3', 'job 2']);
    expect(await requests('/runs?page=3')).toEqual(['job 1']);
    expect(await (await d.get('/runs?page=3', dan)).text()).not.toContain('rel="next"');
    expect(await requests('/runs?page=nonsense')).toEqual(['job 5', 'job 4']);
  });

  it('filters by status, person, channel and workflow, and keeps the filters across pages', async () => {
    expect(await requests('/runs?status=completed')).toEqual(['job 2', 'job 1']);
    expect(await requests('/runs?status=failed')).toEqual(['job 3']);
    expect(await requests('/runs?person=bob')).toEqual(['job 4', 'job 2']);
    expect(await requests(`/runs?person=${ADA.id}`)).toEqual(['job 5', 'job 3']);
    expect(await (await d.get(`/runs?person=${ADA.id}`, dan)).text()).toContain(
      `href="/runs?person=${ADA.id}&amp;page=2"`,
    );
    expect(await requests('/runs?channel=discord')).toEqual([]);
    expect(await requests('/runs?channel=slack&status=planning')).toEqual(['job 5', 'job 4']);
    expect(await requests('/runs?workflow=digest')).toEqual(['job 2']);
  });

  it('shows a run with its plan graph, timeline, decisions, model calls and report', async () => {
    const id = ids[0]!;
    const at = new Date('2026-12-01T08:01:00.000Z');
    await d.store.recordStepStarted({ runId: id, stepId: 'list', attempt: 1, revision: 1, args: {}, at });
    await d.store.recordStepEnded({
      runId: id,
      stepId: 'list',
      attempt: 1,
      status: 'succeeded',
      output: { content: [{ type: 'text', text: 'a.txt b.md' }] },
      error: null,
      at: new Date(at.getTime() + 1500),
      durationMs: 1500,
    });
    await d.store.recordDecision({
      runId: id,
      revision: 1,
      actor: BOB,
      action: 'approve',
      accepted: false,
      note: 'Bob may not decide on this run',
      at,
    });
    await d.store.recordLlmUsage({
      runId: id,
      role: 'planner',
      model: 'gpt-test',
      inputTokens: 1200,
      outputTokens: 300,
      costMicroUsd: 4500,
      at,
    });
    await d.store.setReport(id, 'All files listed.', at);
    const text = await (await d.get(`/runs/${id}`, dan)).text();
    expect(text).toMatch(/<svg\s+id="plan-graph"/);
    expect(text).toMatch(/data-step="list" data-state="succeeded"/);
    expect(text).toMatch(/data-step="summary" data-state="pending"/);
    expect(text).toMatch(/<svg\s+id="timeline"/);
    expect(text).toContain('1.5 s');
    expect(text).toContain('a.txt b.md');
    expect(text).toMatch(
      /Bob \(slack\)<\/td>\s*<td>approve<\/td>\s*<td>1<\/td>\s*<td>refused<\/td>\s*<td>Bob may not decide/,
    );
    expect(text).toContain('gpt-test');
    expect(text).toContain('$0.0045');
    expect(text).toContain('All files listed.');
    expect(text).toContain('first plan: 2 steps');
  });

  it("says whose own account a step on a server that connects per person runs with: the requester's", async () => {
    const personal = createDashboard(database, { personServers: ['fs'] });
    const id = ids[0]!;
    const text = await (await personal.get(`/runs/${id}`, await personal.signIn(DAN))).text();
    expect(text).toMatch(/As <b>Ada<\/b>, with their own account: <code>list<\/code> \(fs\.list_directory\)<\/p>/);
    // Not the approver who looks, and nothing where no server connects per person.
    expect(text).not.toContain('As <b>Dan');
    expect(await (await d.get(`/runs/${id}`, dan)).text()).not.toContain('with their own account');
  });

  it('says a step on a server an approver connects for the workspace runs as the workspace, not as the requester', async () => {
    const shared = createDashboard(database, { workspaceServers: ['fs'] });
    const id = ids[0]!;
    const text = await (await shared.get(`/runs/${id}`, await shared.signIn(DAN))).text();
    expect(text).toMatch(
      /As <b>the workspace<\/b>, with the connection an approver made: <code>list<\/code> \(fs\.list_directory\)<\/p>/,
    );
    expect(text).not.toContain('with their own account');
  });

  it("shows the servers' questions of a run's steps, marked as the servers' words, and who answered", async () => {
    const id = ids[1]!;
    const log = new PgQuestionLog(database.db);
    const at = new Date('2026-12-01T08:02:00.000Z');
    const base = { runId: id, stepId: 'list', server: 'fs', requestedSchema: {}, askedAt: at, deadlineAt: at };
    await log.addQuestion({ ...base, id: 'qa', message: 'Which <b>folder</b>?' });
    await log.closeQuestion('qa', { outcome: 'accepted', by: ADA, content: { folder: 'docs' } }, at);
    await log.addQuestion({ ...base, id: 'qb', message: 'Your password?' });
    await log.closeQuestion('qb', { outcome: 'refused', reason: 'it asks for what looks like a secret' }, at);
    const text = await (await d.get(`/runs/${id}`, dan)).text();
    expect(text).toContain("Servers' questions");
    expect(text).toContain("The servers' words, not Steward's.");
    expect(text).toContain('Which &lt;b&gt;folder&lt;/b&gt;?');
    expect(text).toContain('accepted (Ada)');
    expect(text).toContain('{&quot;folder&quot;:&quot;docs&quot;}');
    expect(text).toContain('it asks for what looks like a secret');
    expect(await (await d.get(`/runs/${ids[2]!}`, dan)).text()).not.toContain("Servers' questions");
  });

  it('renders hostile tool output as inert, cut text, and sends the security headers', async () => {
    const id = ids[4]!;
    const at = new Date('2026-12-01T08:05:00.000Z');
    const hostile = `<script>alert(1)</script><a href="javascript:alert(2)">x</a><img src=x onerror=alert(3)>${'A'.repeat(1_000_000)}`;
    await d.store.recordStepStarted({ runId: id, stepId: 'list', attempt: 1, revision: 1, args: {}, at });
    await d.store.recordStepEnded({
      runId: id,
      stepId: 'list',
      attempt: 1,
      status: 'succeeded',
      output: { content: [{ type: 'text', text: hostile }] },
      error: null,
      at,
      durationMs: 5,
    });
    const res = await d.get(`/runs/${id}`, dan);
    const text = await res.text();
    expect(text).not.toContain('<script>alert');
    expect(text).not.toContain('href="javascript:');
    expect(text).not.toContain('<img src=x');
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text.length).toBeLessThan(100_000);
    expect(text).toContain('more characters not shown');

    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("connect-src 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    // The page's one script carries the nonce; no other script tag is on the page.
    expect([...text.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([`<script nonce="${nonce}">`]);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('a run page over HTTP hears through its events when a step ends, and the fragment then shows it', async () => {
    const app = createDashboardApp({
      data: new PgDashboard(database.db, { baseUrl: PUBLIC_URL }),
      secret: SECRET,
      publicUrl: PUBLIC_URL,
      approvers: [`slack:${DAN.id}`],
      clock: () => d.clock.now,
      pollMs: 50,
    });
    let server: DashboardServer | undefined;
    try {
      server = await startDashboardServer({ port: 0, host: '127.0.0.1', app: () => app });
      const base = `http://127.0.0.1:${server.port}`;
      const id = ids[3]!;
      const res = await fetch(`${base}/runs/${id}/events`, { headers: { cookie: dan } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = '';
      const read = async (what: string) => {
        while (!seen.includes(what)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${what}: ${seen}`);
          seen += value;
        }
      };
      await read('event: ready');
      await d.store.recordStepStarted({ runId: id, stepId: 'list', attempt: 1, revision: 1, args: {}, at: new Date() });
      await read('event: changed');
      const fragment = await waitUntil('the fragment to show the step running', async () => {
        const text = await (await fetch(`${base}/runs/${id}/fragment`, { headers: { cookie: dan } })).text();
        return text.includes('data-step="list" data-state="running"') && text;
      });
      expect(fragment).not.toContain('<html');
      await reader.cancel();
    } finally {
      await server?.close();
    }
  });
});

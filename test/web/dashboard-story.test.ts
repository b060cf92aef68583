/**
 * The run page tells the story of a run (issue 33): each step's tool, its arguments as planned and as resolved, whom
 * it ran as, each attempt with why it ended; and parent and child runs linked both ways. Over HTTP on the real app,
 * over a real PostgreSQL run store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { createDashboard, DAN } from './dashboard-fixtures.ts';
import { seedDelegation, seedRestartRun, seedStepsRun } from './dashboard-story-fixtures.ts';

/** The markup of one step's part of the Steps section. */
function stepPart(page: string, id: string): string {
  const start = page.indexOf(`<div class="step" data-step="${id}"`);
  expect(start, `step ${id} on the page`).toBeGreaterThanOrEqual(0);
  const next = page.indexOf('<div class="step"', start + 1);
  return page.slice(start, next === -1 ? page.indexOf('</section>', start) : next);
}

/** Text of markup with its tags dropped and white space made single. */
const words = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .trim();

describe('dashboard: the story of a run', () => {
  let database: TestDatabase;
  let d: ReturnType<typeof createDashboard>;
  let dan: string;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    d = createDashboard(database, { personServers: ['fs'], workspaceServers: ['wiki'] });
    dan = await d.signIn(DAN);
  });
  afterAll(() => database?.close());

  it("shows each step's tool, arguments as planned and as resolved, whom it ran as, and why each attempt ended", async () => {
    const run = await seedStepsRun(d.store);
    const res = await d.get(`/runs/${run.id}`, dan);
    expect(res.status).toBe(200);
    const page = await res.text();
    // No secret a person typed is shown, planned or resolved; and nothing of the arguments is markup.
    expect(page).not.toContain('sk-live-typed-by-ada');
    expect(page).not.toContain('xoxp-typed');
    expect(page).not.toContain('<img src=x');

    const listPart = words(stepPart(page, 'list'));
    expect(listPart).toContain('list · fs.list_directory');
    expect(listPart).toContain('Ran as Ada (their own account)');
    // As stored (PostgreSQL's jsonb orders keys by length).
    const args = '{"note":"&lt;img src=x onerror=alert(1)&gt;","path":"/tmp","apiKey":"•••"}';
    expect(listPart).toContain(`Arguments as planned: ${args}`);
    expect(listPart).toContain(`1 failed: tool_error: ENOENT: no such directory 1.0 s ${args}`);
    expect(listPart).toContain(`2 succeeded 1.0 s ${args}`);
    expect(listPart).toContain('a.txt &lt;b&gt;b.md&lt;/b&gt;');

    const publishPart = words(stepPart(page, 'publish'));
    expect(publishPart).toContain('publish · wiki.create_page');
    expect(publishPart).toContain('Ran as the workspace');
    // The reference as the plan wrote it; the text it resolved to for the attempt, escaped and cut.
    expect(publishPart).toContain('{"body":⟨steps.list.output.content[0].text⟩,"title":"Files"}');
    expect(publishPart).toContain('interrupted by a restart');
    expect(publishPart).toContain('{"body":"a.txt &lt;b&gt;b.md&lt;/b&gt; xxx');
    expect(publishPart).not.toContain('x'.repeat(1_200));

    const summaryPart = words(stepPart(page, 'summary'));
    expect(summaryPart).toContain('summary · a model call');
    expect(summaryPart).toContain('Ran as Steward');
    expect(summaryPart).toContain('{"prompt":⟨steps.list.output.content[0].text⟩}');
    expect(summaryPart).toContain('1 cancelled by Stop');

    const mailPart = words(stepPart(page, 'mail'));
    expect(mailPart).toContain('mail · mail.send');
    expect(mailPart).toContain('{"to":"ada@example.com","access_token":"•••"}');
    expect(mailPart).toContain('1 skipped: its dependency summary did not succeed');
  });

  it("names the quick path's calls, which have no plan step, with the arguments they were called with", async () => {
    const run = await seedStepsRun(d.store);
    const call = { runId: run.id, stepId: 'quick:1', attempt: 1, revision: -1 };
    await d.store.recordStepStarted({
      ...call,
      args: { query: 'weather in Oslo', password: 'hunter2' },
      at: new Date(),
    });
    const page = await (await d.get(`/runs/${run.id}`, dan)).text();
    const part = words(stepPart(page, 'quick:1'));
    expect(part).toContain('quick:1 · a call of the quick path');
    expect(part).toContain('{"query":"weather in Oslo","password":"•••"}');
    expect(page).not.toContain('hunter2');
  });

  it('links a run that delegated to its child run, and the child to its parent, naming the Assistant', async () => {
    const { parent, child } = await seedDelegation(database, d.store);
    const parentPage = await (await d.get(`/runs/${parent.id}`, dan)).text();
    const ask = stepPart(parentPage, 'ask');
    expect(ask).toContain(`href="/runs/${child.id}"`);
    expect(words(ask)).toContain(`Delegated to Assistant researcher: run ${child.id}`);

    const childPage = await (await d.get(`/runs/${child.id}`, dan)).text();
    expect(childPage).toContain(`href="/runs/${parent.id}"`);
    expect(words(childPage)).toContain(`Ran as Assistant researcher · delegated by run ${parent.id}`);
    // Following the link reaches the parent's page.
    const href = /<a class="parent" href="([^"]+)"/.exec(childPage)?.[1];
    expect(href).toBe(`/runs/${parent.id}`);
    expect((await d.get(href!, dan)).status).toBe(200);
  });

  it('draws the time Steward was down as a gap after what was known of the interrupted attempt, not as its bar', async () => {
    const run = await seedRestartRun(d.store);
    const page = await (await d.get(`/runs/${run.id}`, dan)).text();
    const timeline = page.slice(
      page.search(/<svg\s+id="timeline"/),
      page.indexOf('</svg>', page.search(/<svg\s+id="timeline"/)),
    );
    const bar = (step: string, attempt: number) => {
      const start = timeline.indexOf(`<g class="bar" data-step="${step}" data-attempt="${attempt}"`);
      expect(start, `bar ${step}#${attempt}`).toBeGreaterThanOrEqual(0);
      return timeline.slice(start, timeline.indexOf('</g>', start));
    };
    const num = (markup: string, attr: string) => Number(new RegExp(`\\s${attr}="([\\d.]+)"`).exec(markup)?.[1]);
    const interrupted = bar('slow', 1);
    // What was known of it: from its start to the end of `list` (20 s), the last thing stored before Steward stopped.
    expect(words(interrupted)).toContain('slow attempt 1: failed, 20.0 s');
    const rects = [...interrupted.matchAll(/<rect\b[^>]*>/g)].map((m) => m[0]);
    const gap = rects.find((r) => /class="gap"/.test(r)) ?? '';
    const drawn = rects.find((r) => !/class=/.test(r)) ?? '';
    expect(gap, 'a gap after the interrupted attempt').not.toBe('');
    const gapTitle = /class="gap"[\s\S]*?<title>([\s\S]*?)<\/title>/.exec(interrupted)?.[1] ?? '';
    expect(words(gapTitle)).toBe(
      'slow: Steward was down, nothing known for 10 min 0 s, until a restart took the run over',
    );
    const barX = num(drawn, 'x');
    const barWidth = num(drawn, 'width');
    expect(barWidth).toBeCloseTo((700 * 20) / 650, 0);
    expect(num(gap, 'width')).toBeCloseTo((700 * 600) / 650, 0);
    expect(num(gap, 'x')).toBeCloseTo(barX + barWidth, 3);
    // The retry after the takeover is drawn as before; the legend names the gap.
    expect(words(bar('slow', 2))).toContain('slow attempt 2 (retry): succeeded, 10.0 s');
    expect(timeline).toContain('data-legend="Steward down"');
    expect(words(stepPart(page, 'slow'))).toContain('1 interrupted by a restart');
  });
});

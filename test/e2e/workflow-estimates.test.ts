/**
 * A workflow's fire on the dashboard's estimates page: a fire its saved approval covers starts as it is claimed, with
 * no card to approve, and its run must still be listed with the estimate its card showed and what it took.
 */
import { describe, expect, it } from 'vitest';
import type { PlanEstimate } from '../../src/engine/estimate-history.ts';
import { HISTORY_TTL_MS } from '../../src/engine/flows/plan-estimates.ts';
import { DEFAULT_SCHEDULE_LIMITS } from '../../src/engine/workflow/schedule-limits.ts';
import { estimateLine } from '../../src/engine/run/estimates.ts';
import { byRole } from '../fakes/fake-llm-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createDashboard, DAN } from '../web/dashboard-fixtures.ts';
import { planReply, useAuditHarness } from './harness.ts';

const t = useAuditHarness();

const SLEEP_MS = 1_100;
const NAP = planReply([{ id: 'nap', tool: 'audit.sleep', args: { ms: SLEEP_MS } }]);

describe('a workflow fire on the estimates page', () => {
  it.each(['postgres', 'pglite'] as const)(
    'is listed with the estimate its card showed, what it took and the error, scored as undisturbed (%s)',
    async (db) => {
      // The engine's clock moves past the history's cache, so the fire's card reads the first run's history.
      let skew = 0;
      const h = await t.start({
        db,
        servers: [t.audit.config()],
        script: byRole({ planner: [NAP], synthesizer: 'Napped.' }),
        settings: { scheduleLimits: { ...DEFAULT_SCHEDULE_LIMITS, seconds: true, minIntervalMs: 0 } },
        clock: () => new Date(Date.now() + skew),
        estimates: true,
        modelStreams: false,
      });
      await h.steward.recover();
      await h.type('nap for a second');
      await h.waitFor(/=== Report \(completed\) ===\nNapped\.\n/);
      await h.type('save nap');
      await h.waitFor(/Saved workflow "nap" \(version 1\) from run/);
      await h.steward.idle();

      skew += HISTORY_TTL_MS + 1_000;
      const from = h.output().length;
      await h.type('workflow nap run');
      const fire = await waitUntil('the fire to complete', async () => {
        const row = await h.db.db
          .selectFrom('workflow_fires')
          .innerJoin('runs', 'runs.id', 'workflow_fires.run_id')
          .select(['runs.id', 'workflow_fires.outcome'])
          .where('runs.status', '=', 'completed')
          .executeTakeFirst();
        return row ?? false;
      });
      await h.steward.idle();
      expect(fire.outcome).toBe('started');
      // The fire's card showed an estimate from the first run's nap.
      const card = h.output().slice(from);
      const shown = /\nEstimate: ([^\n]*)\n/.exec(card)?.[1];
      expect(shown, card).toMatch(/^[\d.]+(?:–[\d.]+)? s from past runs with /);

      const d = createDashboard(h.db);
      const text = await (await d.get('/estimates', await d.signIn(DAN))).text();
      const row = new RegExp(`<tr data-run="${fire.id}">([\\s\\S]*?)</tr>`).exec(text)?.[1];
      expect(row, 'the fire is listed on /estimates').toBeDefined();
      const cells = [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.trim());
      // Started, run, request, estimated, took, error, scored.
      expect(cells[2]).toMatch(/^Workflow nap v1: run now of /);
      expect(cells[3]).toMatch(/^[\d.]+ s(–[\d.]+ s)?$/);
      expect(cells[4]).toMatch(/^[\d.]+ s$/);
      expect(cells[6]).toBe('yes');
      // What the page scores is what the card said.
      const stored = await h.db.db
        .selectFrom('run_events')
        .select('payload')
        .where('run_id', '=', fire.id)
        .where('type', '=', 'autoApproved')
        .executeTakeFirstOrThrow();
      const estimate = (stored.payload as unknown as { estimate: PlanEstimate }).estimate;
      expect(card).toContain(estimateLine(estimate));
    },
  );
});

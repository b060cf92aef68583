/**
 * Discord while PostgreSQL is away (a private cluster, test/helpers/private-postgres.ts; the shared server is never
 * touched): a press must still be answered within Discord's 3 s, and Stop must still cancel the calls in flight.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { describeNeeding } from '../helpers/needs.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { createAuditServer, onlyRun, planReply, type AuditServer } from './harness.ts';
import { shownText, startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

describeNeeding(privatePostgresMissing, 'discord while PostgreSQL is away (private cluster)', () => {
  let server: PrivatePostgres;
  let audit: AuditServer | undefined;
  let h: DiscordHarness | undefined;

  beforeAll(async () => {
    server = await startPrivatePostgres();
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(async () => {
    await server.start();
    await h?.close();
    h = undefined;
    audit?.remove();
  });

  it('Stop pressed while the database is down is answered within 3 s and cancels the calls in flight at once', async () => {
    const name = `steward_discord_fault_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    audit = createAuditServer();
    const plan = planReply([
      { id: 'long', tool: 'audit.sleep', args: { ms: 30_000 } },
      { id: 'after', tool: 'audit.sleep', args: { ms: 1 }, dependsOn: ['long'] },
    ]);
    h = await startDiscordHarness({
      db: { url: url.toString() },
      servers: [audit.config()],
      script: byRole({ planner: [plan], synthesizer: ['Stopped while the database was away.'] }),
    });
    const thread = await h.mention('sleep for a long time');
    const a = audit;
    await h.waitFor('the long call at the server', () => a.entries().some((e) => e.type === 'call'));
    const run = await onlyRun(h);

    await server.stop();
    const press = await h.press(h.card(thread), 'stop');
    const interaction = h.discord.interaction(press)!;
    const answer = h.discord.interactionResponses(press)[0]!;
    expect(answer.status).toBe(204);
    expect(answer.at - interaction.dispatchedAt).toBeLessThan(3_000);
    // The call in flight is cancelled at the server while the database is still down.
    await h.waitFor('the cancellation at the server', () => a.entries().some((e) => e.type === 'cancelled'), 5_000);

    await server.start();
    await h.waitFor(
      'the report',
      () => h!.replies(thread).find((m) => shownText(m.message).includes('Stopped while the database was away.')),
      60_000,
    );
    await h.steward.idle();
    expect((await h.store.getRun(run.id))!.status).toBe('stopped');
    expect(
      a
        .entries()
        .filter((e) => e.type === 'call')
        .map((e) => e.args),
    ).toEqual([{ ms: 30_000 }]);
  }, 120_000);
});

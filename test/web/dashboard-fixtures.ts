/** Shared set-up of the dashboard's HTTP tests: a store with runs, the app on it, and signing in like a person. */
import { expect } from 'vitest';
import type { Actor } from '../../src/engine/types.ts';
import { PgDashboard } from '../../src/store/pg-dashboard.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import { createDashboardApp } from '../../src/web/dashboard-app.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { createNewRun, createRevisionPlan } from '../store/builders.ts';

export const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
export const PUBLIC_URL = 'http://dashboard.test';

/** People of the tests: Ada and Bob ask in Slack channel C1, Carol in C2, Dan approves. */
export const ADA: Actor = { id: 'U0ADA', name: 'Ada', channel: 'slack' };
export const BOB: Actor = { id: 'U0BOB', name: 'Bob', channel: 'slack' };
export const CAROL: Actor = { id: 'U0CAROL', name: 'Carol', channel: 'slack' };
export const DAN: Actor = { id: 'U0DAN', name: 'Dan', channel: 'slack' };
/** Eve asks in Discord; the role OPS_ROLE names approvers there. */
export const EVE: Actor = { id: '300000000000000001', name: 'Eve', channel: 'discord' };
export const OPS_ROLE = '700000000000000001';

/** The app on a database, with a clock the test moves. */
export function createDashboard(
  database: TestDatabase,
  options: {
    pageSize?: number;
    pollMs?: number;
    approvers?: string[];
    personServers?: string[];
    workspaceServers?: string[];
  } = {},
) {
  const clock = { now: new Date('2026-12-01T10:00:00.000Z') };
  const data = new PgDashboard(database.db, { baseUrl: PUBLIC_URL });
  const app = createDashboardApp({
    data,
    secret: SECRET,
    publicUrl: PUBLIC_URL,
    clock: () => clock.now,
    ...options,
    approvers: options.approvers ?? [`slack:${DAN.id}`, `discord:role:${OPS_ROLE}`],
  });
  const store = new PgRunStore(database.db);
  /** Uses a sign-in link as a browser would (the form's POST) and returns the response. */
  const useLink = (link: string) =>
    app.request('/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: PUBLIC_URL },
      body: new URLSearchParams({ token: link.split('/signin/')[1] ?? '' }).toString(),
    });
  /** Signs this person in with a fresh link and returns their cookie. */
  const signIn = async (actor: Actor, access?: { approverRoles: string[] }): Promise<string> => {
    const res = await useLink(await data.issue(actor, clock.now, access));
    expect(res.status).toBe(303);
    return cookieOf(res);
  };
  const get = (path: string, cookie?: string) => app.request(path, cookie ? { headers: { cookie } } : {});
  /** Presses "Sign out" (or "Sign out everywhere") on the page, with this cookie. */
  const signOut = (cookie: string, options: { everywhere?: boolean } = {}) =>
    app.request('/signout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: PUBLIC_URL, cookie },
      body: options.everywhere ? 'everywhere=yes' : '',
    });
  return { app, data, store, clock, useLink, signIn, get, signOut };
}

/** The `name=value` part of a response's session cookie. */
export function cookieOf(res: Response): string {
  const header = res.headers.get('set-cookie') ?? '';
  expect(header).toContain('steward_session=');
  return header.split(';')[0] ?? '';
}

/** Stores a run with a plan of two steps; returns its id. */
export async function seedRun(
  store: PgRunStore,
  options: { requester: Actor; key: string; request?: string; at?: Date; status?: 'completed' | 'failed' },
): Promise<string> {
  const at = options.at ?? new Date('2026-12-01T09:00:00.000Z');
  const run = createNewRun({
    requester: options.requester,
    conversation: { channel: options.requester.channel, key: options.key },
    request: options.request ?? `a job of ${options.requester.name ?? options.requester.id}`,
    at,
  });
  await store.createRun(run);
  await store.saveRevision(run.id, 1, createRevisionPlan(), 'planned', at);
  if (options.status) await store.transition(run.id, ['planning'], options.status);
  return run.id;
}

/**
 * The dashboard's session cookie: a random session id, signed (hono's HMAC-SHA256 signed cookies), whose session is
 * kept in the database (ended by signing out, on every process at once). HttpOnly, SameSite=Lax, and Secure with
 * the `__Host-` prefix when the dashboard is served over https.
 */
import type { Context } from 'hono';
import { deleteCookie, getSignedCookie, setSignedCookie } from 'hono/cookie';

/** How long a session lasts after signing in. */
export const SESSION_MS = 8 * 60 * 60_000;

/** The person a session signs in. */
export interface SessionPerson {
  channel: string;
  id: string;
  name: string | null;
  /** The roles named as approvers they held when they asked for their sign-in link. */
  approverRoles: string[];
}

const NAME = 'steward_session';

/** How the cookie is made: signed with `secret`, Secure (with the `__Host-` prefix) when `secure`. */
export interface SessionCookie {
  secret: string;
  secure: boolean;
}

/** Sets the cookie carrying `sessionId` until `expiresAt`. */
export async function setSessionCookie(
  c: Context,
  s: SessionCookie,
  sessionId: string,
  expiresAt: Date,
): Promise<void> {
  await setSignedCookie(c, NAME, sessionId, s.secret, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: s.secure,
    expires: expiresAt,
    ...(s.secure && { prefix: 'host' as const }),
  });
}

/** The session id the cookie carries; null without a cookie, or with a forged or altered one. */
export async function sessionIdOf(c: Context, s: SessionCookie): Promise<string | null> {
  const value = await getSignedCookie(c, s.secret, NAME, s.secure ? 'host' : undefined);
  return typeof value === 'string' && value ? value : null;
}

/** Removes the session cookie (the session itself is ended in the database). */
export function clearSessionCookie(c: Context, s: SessionCookie): void {
  deleteCookie(c, NAME, { path: '/', secure: s.secure, ...(s.secure && { prefix: 'host' as const }) });
}

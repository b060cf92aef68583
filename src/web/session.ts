/**
 * The dashboard's session: a signed cookie (hono's HMAC-SHA256 signed cookies) holding the person and an expiry.
 * HttpOnly, SameSite=Lax, and Secure with the `__Host-` prefix when the dashboard is served over https.
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

/** Sets the session cookie for this person until `expiresAt`. */
export async function startSession(
  c: Context,
  s: SessionCookie,
  person: SessionPerson,
  expiresAt: Date,
): Promise<void> {
  const value = JSON.stringify({
    ...{ c: person.channel, i: person.id, n: person.name, e: expiresAt.getTime() },
    ...(person.approverRoles.length > 0 && { r: person.approverRoles }),
  });
  await setSignedCookie(c, NAME, value, s.secret, {
    httpOnly: true,
    sameSite: 'Lax',
    path: '/',
    secure: s.secure,
    expires: expiresAt,
    ...(s.secure && { prefix: 'host' as const }),
  });
}

/** The signed-in person, or null without a cookie, with a forged or altered one, or after it expired. */
export async function readSession(c: Context, s: SessionCookie, now: Date): Promise<SessionPerson | null> {
  const value = await getSignedCookie(c, s.secret, NAME, s.secure ? 'host' : undefined);
  if (!value) return null;
  try {
    const parsed = JSON.parse(value) as { c?: unknown; i?: unknown; n?: unknown; e?: unknown; r?: unknown };
    if (typeof parsed.c !== 'string' || typeof parsed.i !== 'string' || typeof parsed.e !== 'number') return null;
    if (parsed.e <= now.getTime()) return null;
    const name = typeof parsed.n === 'string' ? parsed.n : null;
    const roles = Array.isArray(parsed.r) ? parsed.r.filter((r): r is string => typeof r === 'string') : [];
    return { channel: parsed.c, id: parsed.i, name, approverRoles: roles };
  } catch {
    return null;
  }
}

/** Removes the session cookie. */
export function endSession(c: Context, s: SessionCookie): void {
  deleteCookie(c, NAME, { path: '/', secure: s.secure, ...(s.secure && { prefix: 'host' as const }) });
}

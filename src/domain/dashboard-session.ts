import { createHash, createHmac, randomBytes } from "node:crypto";

/** How long a dashboard session lasts (DASHBOARD_SESSION_IDLE_MINUTES / _MAX_HOURS). */
export type SessionLimits = {
  /** Ends after this long without a request. */
  idleMs: number;
  /** Ends this long after sign-in, however busy. */
  maxMs: number;
};

/** 30 minutes idle, 12 hours at most: a working day, and a walk-away ends it soon. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  idleMs: 30 * 60_000,
  maxMs: 12 * 3_600_000,
};

/** A new session token: 256 random bits, held by the browser only (as an HttpOnly cookie). */
export function newSessionToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What is stored of a token: its SHA-256 (256 random bits need no slow hash). */
export function hashSessionToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * The session's CSRF token, put in its forms and checked on every POST. Derived from the
 * session token (which a page's scripts and other sites never see), so nothing more is stored
 * and it cannot be computed from the stored hash.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac("sha256", sessionToken).update("dashboard csrf").digest("base64url");
}

export type SessionTimes = { createdAt: Date; lastSeenAt: Date };

export function sessionExpired(session: SessionTimes, now: Date, limits: SessionLimits): boolean {
  const t = now.getTime();
  return (
    t - session.lastSeenAt.getTime() >= limits.idleMs ||
    t - session.createdAt.getTime() >= limits.maxMs
  );
}

/** A session's last-seen time is written at most this often (a write off most page views). */
export const SESSION_TOUCH_EVERY_MS = 60_000;

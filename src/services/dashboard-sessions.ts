import type { Caller } from "../domain/caller.js";
import {
  csrfTokenOf,
  hashSessionToken,
  newSessionToken,
  SESSION_TOUCH_EVERY_MS,
  type SessionLimits,
  sessionExpired,
} from "../domain/dashboard-session.js";
import { AuthenticationError } from "../domain/errors.js";
import type { DashboardSessionStore } from "../store/dashboard-session-store.js";
import type { Authenticator } from "./authenticate.js";

export type DashboardSession = { caller: Caller; csrfToken: string; organizationName: string };

/**
 * Dashboard sign-in: an API key opens a session; each request resumes it through the
 * authenticator (the key is read with the session, so a revoked key ends it at once).
 */
export function createDashboardSessions(deps: {
  sessions: DashboardSessionStore;
  authenticator: Authenticator;
  now: () => Date;
  limits: SessionLimits;
}) {
  const { sessions, authenticator, now, limits } = deps;
  return {
    /** Opens a session for `key` (an AuthenticationError when it does not authenticate). */
    async signIn(key: string): Promise<{ token: string }> {
      const caller = await authenticator.authenticate(key);
      if (caller.apiKeyId === null) throw new AuthenticationError("Invalid API key");
      const at = now();
      // Expired sessions of anyone are cleared here, so the table holds live ones only.
      await sessions.deleteExpired(
        new Date(at.getTime() - limits.idleMs),
        new Date(at.getTime() - limits.maxMs),
      );
      const token = newSessionToken();
      await sessions.create(hashSessionToken(token), caller.apiKeyId, at);
      return { token };
    },

    /** The session of `token`; undefined when unknown, expired, or its key was revoked. */
    async resume(token: string): Promise<DashboardSession | undefined> {
      const tokenHash = hashSessionToken(token);
      const stored = await sessions.find(tokenHash);
      if (stored === undefined) return undefined;
      const at = now();
      if (sessionExpired(stored, at, limits) || stored.key.revokedAt !== null) {
        await sessions.delete(tokenHash);
        return undefined;
      }
      const caller = await authenticator.callerOf(stored.key);
      if (at.getTime() - stored.lastSeenAt.getTime() >= SESSION_TOUCH_EVERY_MS) {
        await sessions.touch(tokenHash, at);
      }
      return { caller, csrfToken: csrfTokenOf(token), organizationName: stored.organizationName };
    },

    async signOut(token: string): Promise<void> {
      await sessions.delete(hashSessionToken(token));
    },
  };
}

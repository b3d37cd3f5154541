import type { Kysely } from "kysely";
import type { SessionTimes } from "../domain/dashboard-session.js";
import { type ApiKeyOwner, selectApiKeyOwners, toApiKeyOwner } from "./api-key-owners.js";
import type { Tables } from "./tables.js";

export type StoredSession = SessionTimes & { key: ApiKeyOwner; organizationName: string };

/** Dashboard sessions, by the hash of their token (see migrations/008_dashboard_sessions.sql). */
export function createDashboardSessionStore(db: Kysely<Tables>) {
  return {
    async create(tokenHash: string, apiKeyId: string, now: Date): Promise<void> {
      await db
        .insertInto("dashboard_sessions")
        .values({ token_hash: tokenHash, api_key_id: apiKeyId, created_at: now, last_seen_at: now })
        .execute();
    },

    /** The session with the key it was opened with, read together: one lookup per request. */
    async find(tokenHash: string): Promise<StoredSession | undefined> {
      const row = await selectApiKeyOwners(db)
        .innerJoin("dashboard_sessions", "dashboard_sessions.api_key_id", "api_keys.id")
        .select([
          "dashboard_sessions.created_at as sessionCreatedAt",
          "dashboard_sessions.last_seen_at as sessionLastSeenAt",
          "organizations.name as organizationName",
        ])
        .where("dashboard_sessions.token_hash", "=", tokenHash)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      const { sessionCreatedAt, sessionLastSeenAt, organizationName, ...key } = row;
      return {
        createdAt: sessionCreatedAt,
        lastSeenAt: sessionLastSeenAt,
        organizationName,
        key: toApiKeyOwner(key),
      };
    },

    async touch(tokenHash: string, now: Date): Promise<void> {
      await db
        .updateTable("dashboard_sessions")
        .set({ last_seen_at: now })
        .where("token_hash", "=", tokenHash)
        .execute();
    },

    async delete(tokenHash: string): Promise<void> {
      await db.deleteFrom("dashboard_sessions").where("token_hash", "=", tokenHash).execute();
    },

    /** Removes every session idle since `idleBefore` or opened before `openedBefore`. */
    async deleteExpired(idleBefore: Date, openedBefore: Date): Promise<void> {
      await db
        .deleteFrom("dashboard_sessions")
        .where((eb) =>
          eb.or([eb("last_seen_at", "<=", idleBefore), eb("created_at", "<=", openedBefore)]),
        )
        .execute();
    },
  };
}

export type DashboardSessionStore = ReturnType<typeof createDashboardSessionStore>;

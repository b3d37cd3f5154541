import { type Kysely, sql } from "kysely";
import { engagementsWithNames, typedEngagements } from "./organization-profiles.js";
import type { Tables } from "./tables.js";

/**
 * What the operator's dashboard reads across every organization: engagements, API keys (never
 * their hashes) and the freshness of the reference data.
 */
export function createOperatorStore(db: Kysely<Tables>) {
  return {
    /** Every engagement, ended ones included, by organization, coin and start. */
    async engagements() {
      return typedEngagements(
        await engagementsWithNames(db)
          .orderBy("g.organization_id")
          .orderBy("g.base_coin_id")
          .orderBy("g.since")
          .execute(),
      );
    },

    /**
     * Every API key: who holds it, its prefix and label, when used and revoked. Active keys
     * first, then by age, so that keys loaded together (a fixture) keep one order.
     */
    async apiKeys() {
      return db
        .selectFrom("api_keys as k")
        .innerJoin("organizations as o", "o.id", "k.organization_id")
        .select([
          "k.id",
          "k.organization_id as organizationId",
          "o.name as organizationName",
          "k.prefix",
          "k.label",
          "k.created_at as createdAt",
          "k.last_used_at as lastUsedAt",
          "k.revoked_at as revokedAt",
        ])
        .orderBy("k.organization_id")
        .orderBy(sql`k.revoked_at is not null`)
        .orderBy("k.created_at")
        .orderBy("k.id")
        .execute();
    },

    async referenceFreshness() {
      const row = await db
        .selectFrom("reference_data_version")
        .select(["version", "changed_at as changedAt", "synced_at as syncedAt"])
        .executeTakeFirst();
      return {
        version: Number(row?.version ?? 0),
        changedAt: row?.changedAt ?? null,
        syncedAt: row?.syncedAt ?? null,
      };
    },

    /** Records that a market-data sync completed at `at` (whether it changed anything or not). */
    async markSynced(at: Date): Promise<void> {
      await db.updateTable("reference_data_version").set({ synced_at: at }).execute();
    },
  };
}

export type OperatorStore = ReturnType<typeof createOperatorStore>;

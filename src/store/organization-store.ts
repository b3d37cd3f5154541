import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { SubmissionType } from "../domain/report.js";
import { type ApiKeyRecord, apiKeyColumns, apiKeyOwnerByHash } from "./api-key-owners.js";
import { organizationProfileQueries } from "./organization-profiles.js";
import type { Tables } from "./tables.js";

export type { ApiKeyOwner, ApiKeyRecord } from "./api-key-owners.js";

export type Engagement = {
  id: string;
  organizationId: string;
  baseCoinId: string;
  type: SubmissionType;
  since: string;
  until: string | null;
};

const engagementColumns = [
  "id",
  "organization_id as organizationId",
  "base_coin_id as baseCoinId",
  "type",
  "since",
  "until",
] as const;

export function createOrganizationStore(db: Kysely<Tables>) {
  return {
    ...organizationProfileQueries(db),

    findApiKeyByHash: apiKeyOwnerByHash(db),

    /** Records use at most once a minute per key, to keep a write off most requests. */
    async touchApiKey(id: string, now: Date): Promise<void> {
      await db
        .updateTable("api_keys")
        .set({ last_used_at: now })
        .where("id", "=", id)
        .where((eb) =>
          eb.or([
            eb("last_used_at", "is", null),
            eb("last_used_at", "<", new Date(now.getTime() - 60_000)),
          ]),
        )
        .execute();
    },

    /** Inserts or renames; returns whether anything changed. */
    async upsertOrganization(id: string, name: string): Promise<boolean> {
      const r = await db
        .insertInto("organizations")
        .values({ id, name })
        .onConflict((oc) =>
          oc.column("id").doUpdateSet({ name }).where("organizations.name", "!=", name),
        )
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    /** Adds a key by its hash unless it exists; returns whether it was added. */
    async addApiKey(key: {
      organizationId: string;
      hash: string;
      prefix: string;
      label: string;
    }): Promise<string | undefined> {
      const r = await db
        .insertInto("api_keys")
        .values({
          id: randomUUID(),
          organization_id: key.organizationId,
          key_hash: key.hash,
          prefix: key.prefix,
          label: key.label,
        })
        .onConflict((oc) => oc.column("key_hash").doNothing())
        .returning("id")
        .executeTakeFirst();
      return r?.id;
    },

    async apiKeys(organizationId: string): Promise<ApiKeyRecord[]> {
      return db
        .selectFrom("api_keys")
        .select(apiKeyColumns)
        .where("organization_id", "=", organizationId)
        .orderBy("created_at")
        .execute();
    },

    /** Revokes a key found by id, prefix or hash; returns the keys revoked now. */
    async revokeApiKey(
      match: { id?: string; prefix?: string; hash?: string; organizationId?: string },
      now: Date,
    ): Promise<number> {
      let q = db.updateTable("api_keys").set({ revoked_at: now }).where("revoked_at", "is", null);
      if (match.id !== undefined) q = q.where("id", "=", match.id);
      if (match.prefix !== undefined) q = q.where("prefix", "=", match.prefix);
      if (match.hash !== undefined) q = q.where("key_hash", "=", match.hash);
      if (match.organizationId !== undefined)
        q = q.where("organization_id", "=", match.organizationId);
      const r = await q.executeTakeFirst();
      return Number(r.numUpdatedRows);
    },

    /** Inserts an engagement or updates its type and end; returns whether anything changed. */
    async upsertEngagement(e: Omit<Engagement, "id">): Promise<boolean> {
      const r = await db
        .insertInto("engagements")
        .values({
          id: randomUUID(),
          organization_id: e.organizationId,
          base_coin_id: e.baseCoinId,
          type: e.type,
          since: e.since,
          until: e.until,
        })
        .onConflict((oc) =>
          oc
            .columns(["organization_id", "base_coin_id", "since"])
            .doUpdateSet({ type: e.type, until: e.until })
            .where((eb) =>
              eb.or([
                eb("engagements.type", "!=", e.type),
                eb("engagements.until", "is distinct from", e.until),
              ]),
            ),
        )
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async engagements(organizationId: string): Promise<Engagement[]> {
      const rows = await db
        .selectFrom("engagements")
        .select(engagementColumns)
        .where("organization_id", "=", organizationId)
        .orderBy("base_coin_id")
        .orderBy("since")
        .execute();
      return rows.map((r) => ({ ...r, type: r.type as SubmissionType }));
    },

    /** Every coin some organization is (or was) engaged for. */
    async engagedCoinIds(): Promise<string[]> {
      const rows = await db.selectFrom("engagements").select("base_coin_id").distinct().execute();
      return rows.map((r) => r.base_coin_id);
    },

    /** Engagements active on `today`: since <= today and until null or >= today. */
    async activeEngagements(organizationId: string, today: string): Promise<Engagement[]> {
      const rows = await db
        .selectFrom("engagements")
        .select(engagementColumns)
        .where("organization_id", "=", organizationId)
        .where("since", "<=", today)
        .where((eb) => eb.or([eb("until", "is", null), eb("until", ">=", today)]))
        .orderBy("base_coin_id")
        .execute();
      return rows.map((r) => ({ ...r, type: r.type as SubmissionType }));
    },

    /**
     * Holds the organization's row until the transaction ends, so that two writers of its
     * engagements check for overlaps one after the other.
     */
    async lockOrganization(organizationId: string): Promise<void> {
      await db
        .selectFrom("organizations")
        .select("id")
        .where("id", "=", organizationId)
        .forUpdate()
        .execute();
    },

    async endEngagement(
      organizationId: string,
      baseCoinId: string,
      until: string,
    ): Promise<number> {
      const r = await db
        .updateTable("engagements")
        .set({ until })
        .where("organization_id", "=", organizationId)
        .where("base_coin_id", "=", baseCoinId)
        .where((eb) => eb.or([eb("until", "is", null), eb("until", ">", until)]))
        .where("since", "<=", until)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
  };
}

export type OrganizationStore = ReturnType<typeof createOrganizationStore>;

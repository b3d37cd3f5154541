import { type InferResult, type Kysely, sql } from "kysely";
import type { OrganizationKind } from "../domain/caller.js";
import type { Tables } from "./tables.js";

export type ApiKeyRecord = {
  id: string;
  organizationId: string;
  prefix: string;
  label: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
};

/** `lastWriteLsn`: where the key's last write committed on the primary (read-router.ts). */
export type ApiKeyOwner = ApiKeyRecord & { kind: OrganizationKind; coins: string[] } & {
  lastWriteLsn: string | null;
};

export const apiKeyColumns = [
  "id",
  "organization_id as organizationId",
  "prefix",
  "label",
  "created_at as createdAt",
  "revoked_at as revokedAt",
  "last_used_at as lastUsedAt",
] as const;

/** Keys with their organization's kind and (for a project) coins: who a key acts for. */
export function selectApiKeyOwners(db: Kysely<Tables>) {
  return db
    .selectFrom("api_keys")
    .innerJoin("organizations", "organizations.id", "api_keys.organization_id")
    .select(apiKeyColumns.map((c) => `api_keys.${c}` as const))
    .select("organizations.kind")
    .select(sql<string | null>`api_keys.last_write_lsn::text`.as("lastWriteLsn"))
    .select((eb) =>
      eb
        .selectFrom("organization_coins")
        .select(
          sql<string[]>`coalesce(array_agg(base_coin_id order by base_coin_id), '{}')`.as("coins"),
        )
        .whereRef("organization_coins.organization_id", "=", "api_keys.organization_id")
        .as("coins"),
    );
}

type OwnerRow = Omit<ApiKeyOwner, "kind" | "coins"> & { kind: string; coins: string[] | null };
export const toApiKeyOwner = (row: OwnerRow): ApiKeyOwner => ({
  ...row,
  kind: row.kind as OrganizationKind,
  coins: row.coins ?? [],
});

/**
 * A key by its hash, with its organization's kind and (for a project) coins. The query is
 * built and compiled at the first lookup and kept: building and compiling it again cost every
 * request 30-45 µs of CPU (65-125 µs in the server's profile under ingest). Not before: the
 * stores of every transaction are made anew and most never look up a key. Each lookup sends
 * the same text with its own hash.
 */
export function apiKeyOwnerByHash(db: Kysely<Tables>) {
  const build = () => selectApiKeyOwners(db).where("api_keys.key_hash", "=", "");
  let compiled: ReturnType<ReturnType<typeof build>["compile"]> | undefined;
  return async (hash: string): Promise<ApiKeyOwner | undefined> => {
    compiled ??= build().compile();
    const { rows } = await db.executeQuery<InferResult<ReturnType<typeof build>>[number]>({
      ...compiled,
      parameters: [hash],
    });
    const row = rows[0];
    return row === undefined ? undefined : toApiKeyOwner(row);
  };
}

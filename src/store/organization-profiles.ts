import { type Kysely, sql } from "kysely";
import type { OrganizationKind } from "../domain/caller.js";
import type { SubmissionType } from "../domain/report.js";
import type { Tables } from "./tables.js";

/** Organizations with their kind and coins: the queries of the organization store. */
export function organizationProfileQueries(db: Kysely<Tables>) {
  const profiles = () =>
    db
      .selectFrom("organizations as o")
      .select(["o.id", "o.name", "o.kind"])
      .select((eb) =>
        eb
          .selectFrom("organization_coins as oc")
          .select(
            sql<string[]>`coalesce(array_agg(oc.base_coin_id order by oc.base_coin_id), '{}')`.as(
              "coins",
            ),
          )
          .whereRef("oc.organization_id", "=", "o.id")
          .as("coins"),
      )
      .select("o.created_at as createdAt");
  const typed = <R extends { kind: string; coins: string[] | null }>(row: R) => ({
    ...row,
    kind: row.kind as OrganizationKind,
    coins: row.coins ?? [],
  });

  return {
    async organizations() {
      return (await profiles().orderBy("o.id").execute()).map(typed);
    },

    async organization(id: string) {
      const row = await profiles().where("o.id", "=", id).executeTakeFirst();
      return row === undefined ? undefined : typed(row);
    },

    /**
     * Engagements active on `today` of every organization (of those for `coins` when given),
     * with the organization's name, ordered by coin and organization; every engagement, ended
     * ones included, without `today` (what a project or operator key reads reports of).
     */
    async engagementsAcross(today: string | undefined, coins?: readonly string[]) {
      let q = engagementsWithNames(db);
      if (today !== undefined)
        q = q
          .where("g.since", "<=", today)
          .where((eb) => eb.or([eb("g.until", "is", null), eb("g.until", ">=", today)]));
      if (coins !== undefined) {
        if (coins.length === 0) return [];
        q = q.where("g.base_coin_id", "in", coins);
      }
      return typedEngagements(
        await q.orderBy("g.base_coin_id").orderBy("g.organization_id").execute(),
      );
    },

    /**
     * Sets an organization's kind and the coins it owns (exactly these); returns the rows
     * changed, so that loading the same fixture twice changes nothing.
     */
    async setProfile(id: string, kind: OrganizationKind, coins: readonly string[]) {
      const kindChanged = await db
        .updateTable("organizations")
        .set({ kind })
        .where("id", "=", id)
        .where("kind", "!=", kind)
        .executeTakeFirst();
      let removed = db.deleteFrom("organization_coins").where("organization_id", "=", id);
      if (coins.length > 0) removed = removed.where("base_coin_id", "not in", coins);
      const deleted = await removed.executeTakeFirst();
      let added = 0;
      if (coins.length > 0) {
        const inserted = await db
          .insertInto("organization_coins")
          .values(coins.map((c) => ({ organization_id: id, base_coin_id: c })))
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst();
        added = Number(inserted.numInsertedOrUpdatedRows ?? 0);
      }
      return Number(kindChanged.numUpdatedRows) + Number(deleted.numDeletedRows) + added;
    },
  };
}

/** Engagements with their organization's name: the select both the listing and the operator use. */
export function engagementsWithNames(db: Kysely<Tables>) {
  return db
    .selectFrom("engagements as g")
    .innerJoin("organizations as o", "o.id", "g.organization_id")
    .select([
      "g.organization_id as organizationId",
      "o.name as organizationName",
      "g.base_coin_id as baseCoinId",
      "g.type",
      "g.since",
      "g.until",
    ]);
}

export function typedEngagements<R extends { type: string }>(rows: R[]) {
  return rows.map((r) => ({ ...r, type: r.type as SubmissionType }));
}

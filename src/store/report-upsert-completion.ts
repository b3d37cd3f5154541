import { CompiledQuery, type Kysely } from "kysely";
import { withTransientRetry } from "./retry.js";
import type { Tables } from "./tables.js";

/** What `upsertCompleting` stores in the Idempotency-Key's row with the batch. */
export type UpsertCompletion = {
  key: string;
  claim: string;
  /** The 201's body before, between and after its createdCount and updatedCount. */
  bodyAround: [string, string, string];
  headers: Record<string, string>;
  keepUntil: Date;
};

/** The pieces the batch upsert (report-store.ts) takes to complete a key in its statement. */
export type CompletionSql = { claim: string; inputGate: string; keep: string; result: string };

/**
 * The Idempotency-Key's completion inside the batch's upsert, its parameters numbered from
 * `offset + 1` (after the upsert's own): the key, the claim, the body around the two counts
 * (prefix, middle, suffix), the headers, the time the answer is kept until. The batch's rows are
 * written only while the claim holds the key's row (locked for the statement).
 */
export function completionSql(offset: number): CompletionSql {
  const p = (n: number) => `$${offset + n}`;
  const own = `organization_id = $1::text and key = ${p(1)}::text and claim = ${p(2)}::uuid`;
  return {
    claim: `
  claimed as (select 1 from idempotency_keys where ${own} for update),`,
    inputGate: " and exists (select 1 from claimed)",
    keep: `,
  kept as (
    update idempotency_keys set status_code = 201,
      response_body = ${p(3)}::text || (select count(*) filter (where created) from upserted)
        || ${p(4)}::text || (select count(*) filter (where not created) from upserted)
        || ${p(5)}::text,
      response_headers = ${p(6)}::json, expires_at = ${p(7)}::timestamptz
    where ${own} and exists (select 1 from upserted)
    returning response_body
  )`,
    result: `,
    exists (select 1 from claimed) as held, (select response_body from kept) as kept_body`,
  };
}

type Row = { created: number; total: number; current: boolean; held: boolean; kept_body: string };

/**
 * Runs the completing upsert: nothing is written once the claim is lost (`held` false);
 * `counts` undefined when reference data changed (as `upsert`); `keptBody` the body stored,
 * for the caller to check against its own rendering.
 */
export async function upsertCompleting(
  db: Kysely<Tables>,
  sqlText: string,
  completion: UpsertCompletion,
  upsertParameters: unknown[],
) {
  const query = CompiledQuery.raw(sqlText, [
    ...upsertParameters,
    completion.key,
    completion.claim,
    ...completion.bodyAround,
    JSON.stringify(completion.headers),
    completion.keepUntil,
  ]);
  const run = () => db.executeQuery<Row>(query);
  const row = (await (db.isTransaction ? run() : withTransientRetry(run))).rows[0];
  if (row === undefined || !row.held) return { counts: undefined, held: false, keptBody: null };
  const counts = row.current
    ? { createdCount: row.created, updatedCount: row.total - row.created }
    : undefined;
  return { counts, held: true, keptBody: row.kept_body as string | null };
}

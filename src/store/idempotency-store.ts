import { type Kysely, sql } from "kysely";
import type { Tables } from "./tables.js";

/** An answer kept for replay: its status, its body exactly as sent, and a few of its headers. */
export type StoredResponse = {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
};

/** One request's hold on a key: only the holder of `claim` may store the key's answer. */
export type IdempotencyClaim = { organizationId: string; key: string; claim: string };

/** What a key holds when a request could not claim it. */
export type HeldKey = { requestHash: string; response: StoredResponse | undefined };

type Row = {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  response_headers: Record<string, string> | string | null;
};

/** What a key holds while it is live (not expired at `now`), read without a lock. */
const liveRow = (held: IdempotencyClaim, now: Date) => sql`
  select request_hash, status_code, response_body, response_headers
  from idempotency_keys
  where organization_id = ${held.organizationId} and key = ${held.key} and expires_at > ${now}`;

/** The rows of `idempotency_keys` (see migrations/010_idempotency.sql for the life of a row). */
export function createIdempotencyStore(db: Kysely<Tables>) {
  return {
    /**
     * Claims the key for one request, in one statement of its own: a new key, or one whose row
     * expired (an answer past retention, a crashed request's lease), is taken; a live row is
     * returned instead, read without a lock, so that a retry while the key's batch is being
     * stored (its statement holds the row) is answered at once instead of holding a connection
     * until that batch ends. A concurrent insert of the same new key waits for the other's
     * short claim statement, so two requests never both hold one key.
     */
    async claim(
      held: IdempotencyClaim & { requestHash: string },
      now: Date,
      leaseUntil: Date,
    ): Promise<{ claimed: true } | { claimed: false; held: HeldKey | undefined }> {
      // Committed without waiting for the disk (synchronous_commit off, for this statement's
      // transaction only): visibility to other sessions is the same, and a claim lost in a
      // database crash is harmless, as the answer is stored durably, by `complete`, with the
      // batch. It saves the claim a WAL flush on the ingest path.
      const result = await sql<Row & { claim: string | null }>`
        with live as (${liveRow(held, now)}),
        taken as (
          insert into idempotency_keys as k
            (organization_id, key, request_hash, claim, created_at, expires_at)
          select ${held.organizationId}, ${held.key}, ${held.requestHash}, ${held.claim}::uuid,
            ${now}::timestamptz, ${leaseUntil}::timestamptz
          from (select set_config('synchronous_commit', 'off', true)) as no_flush
          where not exists (select 1 from live)
          on conflict (organization_id, key) do update set
            request_hash = excluded.request_hash, claim = excluded.claim,
            status_code = null, response_body = null, response_headers = null,
            created_at = excluded.created_at, expires_at = excluded.expires_at
          where k.expires_at <= ${now}
          returning claim
        )
        select (select claim from taken) as claim, live.*
        from (select 1) as one left join live on true`.execute(db);
      const answer = result.rows[0];
      if (answer?.claim) return { claimed: true };
      if (answer?.request_hash) return { claimed: false, held: heldKeyOf(answer) };
      // Another request inserted the key after this statement's snapshot: read what it holds.
      const row = await sql<Row>`${liveRow(held, now)}`.execute(db);
      const found = row.rows[0];
      // Gone since (its request failed and released it, or it expired): the caller tries again.
      return { claimed: false, held: found === undefined ? undefined : heldKeyOf(found) };
    },

    /**
     * Stores the answer of the claim's holder, kept until `keepUntil`. Run it in the transaction
     * of the batch. Returns false when the row is no longer this request's (another request took
     * the key over once this one's lease ran out): the caller must then roll the batch back.
     */
    async complete(held: IdempotencyClaim, response: StoredResponse, keepUntil: Date) {
      const written = await sql<{ claim: string }>`
        update idempotency_keys set status_code = ${response.statusCode},
          response_body = ${response.body},
          response_headers = ${JSON.stringify(response.headers)}::json,
          expires_at = ${keepUntil}
        where organization_id = ${held.organizationId} and key = ${held.key}
          and claim = ${held.claim}::uuid
        returning claim`.execute(db);
      return written.rows.length > 0;
    },

    /**
     * Gives the key up (its request did not end in a kept answer); another's claim stays, and
     * so does an answer this claim kept: a request can fail after its batch and answer
     * committed (the connection lost on the way back, say), and its client's retry must get
     * that answer replayed, not store the batch again as an update.
     */
    async release(held: IdempotencyClaim): Promise<void> {
      await sql`
        delete from idempotency_keys
        where organization_id = ${held.organizationId} and key = ${held.key}
          and claim = ${held.claim}::uuid and status_code is null`.execute(db);
    },

    /**
     * Deletes up to `limit` rows expired before `before` and returns how many. Rows another
     * transaction holds are skipped (SKIP LOCKED), so a purge never waits for, nor delays, a
     * submission.
     */
    async purgeExpired(before: Date, limit: number): Promise<number> {
      const deleted = await sql<{ n: number }>`
        with expired as (
          select organization_id, key from idempotency_keys
          where expires_at <= ${before}
          order by expires_at
          limit ${limit}
          for update skip locked
        ),
        gone as (
          delete from idempotency_keys k using expired e
          where k.organization_id = e.organization_id and k.key = e.key
          returning 1
        )
        select count(*)::int as n from gone`.execute(db);
      return deleted.rows[0]?.n ?? 0;
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;

function heldKeyOf(row: Row): HeldKey {
  if (row.status_code === null || row.response_body === null) {
    return { requestHash: row.request_hash, response: undefined };
  }
  const headers =
    typeof row.response_headers === "string"
      ? (JSON.parse(row.response_headers) as Record<string, string>)
      : (row.response_headers ?? {});
  return {
    requestHash: row.request_hash,
    response: { statusCode: row.status_code, body: row.response_body, headers },
  };
}

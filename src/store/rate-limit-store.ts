import { type Kysely, sql } from "kysely";
import type { Tables } from "./tables.js";

/** A budget's current window: requests counted in it and milliseconds until it ends. */
export type StoredWindow = { count: number; resetsInMs: number };

const MS = sql`interval '1 millisecond'`;

/**
 * Fixed-window counters in `rate_limit_windows`, shared by every process on the database. Each
 * call is one statement (no transaction, no session state: PgBouncer in transaction mode is
 * fine) timed by the database's clock, so processes whose clocks differ still agree on windows.
 */
export function createRateLimitStore(db: Kysely<Tables>) {
  return {
    /** Counts one request against `name`/`key`, opening a new window when the last one ended. */
    async hit(name: string, key: string, windowMs: number): Promise<StoredWindow> {
      const { rows } = await sql<{ count: number; resets_in_ms: number }>`
        insert into rate_limit_windows as w (name, key, count, resets_at)
        values (${name}, ${key}, 1, now() + ${windowMs} * ${MS})
        on conflict (name, key) do update set
          count = case when w.resets_at <= now() then 1 else w.count + 1 end,
          resets_at = case when w.resets_at <= now() then excluded.resets_at else w.resets_at end
        returning count, ceil(extract(epoch from resets_at - now()) * 1000)::integer as resets_in_ms
      `.execute(db);
      const row = rows[0];
      if (row === undefined) throw new Error("rate limit upsert returned no row");
      return { count: row.count, resetsInMs: row.resets_in_ms };
    },

    /** The window of `name`/`key` if one is open; counts nothing. */
    async peek(name: string, key: string): Promise<StoredWindow | undefined> {
      const { rows } = await sql<{ count: number; resets_in_ms: number }>`
        select count, ceil(extract(epoch from resets_at - now()) * 1000)::integer as resets_in_ms
        from rate_limit_windows where name = ${name} and key = ${key} and resets_at > now()
      `.execute(db);
      const row = rows[0];
      return row === undefined ? undefined : { count: row.count, resetsInMs: row.resets_in_ms };
    },

    /** Deletes the windows that ended; returns how many. */
    async sweep(): Promise<number> {
      const result = await db
        .deleteFrom("rate_limit_windows")
        .where("resets_at", "<=", sql<Date>`now()`)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

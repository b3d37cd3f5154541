import { type Kysely, sql } from "kysely";
import type { Tables } from "../../src/store/tables.js";

/**
 * Resolves once at least `sessions` sessions of this database wait for a lock of any kind (a
 * table, a row, an advisory lock); polled, and fails after 10 s. PostgreSQL only.
 */
export async function untilSessionsWait(db: Kysely<Tables>, sessions: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    if ((r.rows[0]?.n ?? 0) >= sessions) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${sessions} sessions waited for a lock within 10 s`);
}

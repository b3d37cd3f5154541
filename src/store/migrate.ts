import { readdir, readFile } from "node:fs/promises";
import { type Kysely, sql } from "kysely";
import { script } from "./pglite-dialect.js";
import type { Tables } from "./tables.js";

const MIGRATIONS_DIR = new URL("../../migrations/", import.meta.url);
// Any constant will do; it only has to be the same in every process of this service.
const MIGRATION_LOCK_ID = 727_001;

/**
 * Applies the plain SQL files of `migrations/` that have not run yet, in name order, each in
 * its own transaction. An advisory lock keeps two processes starting together from racing.
 * Returns the names applied.
 */
export async function migrate(db: Kysely<Tables>): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx);
    // Created only when missing: a start with nothing to apply writes nothing, so that it
    // passes the embedded database's disk reserve (disk-space.ts) and serves reads.
    const table = await sql<{ found: string | null }>`
      select to_regclass('schema_migrations')::text as found`.execute(trx);
    if (table.rows[0]?.found == null) {
      await sql`create table schema_migrations (
        name text primary key, applied_at timestamptz not null default now())`.execute(trx);
    }
    const done = await sql<{ name: string }>`select name from schema_migrations`.execute(trx);
    const applied = new Set(done.rows.map((row) => row.name));
    const pending = files.filter((file) => !applied.has(file));
    for (const file of pending) {
      const text = await readFile(new URL(file, MIGRATIONS_DIR), "utf8");
      await script(text).execute(trx);
      await sql`insert into schema_migrations (name) values (${file})`.execute(trx);
    }
    return pending;
  });
}

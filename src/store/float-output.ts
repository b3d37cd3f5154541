import { type Kysely, sql } from "kysely";
import { ConfigError } from "../config.js";
import type { Tables } from "./tables.js";

/**
 * Refuses a database that prints float8 values rounded: with `extra_float_digits` below 1
 * (a role's, a database's or PGLITE_SETTINGS' setting) PostgreSQL prints 15 significant
 * digits, and the listing, the export and every figure read back would differ from what was
 * submitted (0.30000000000000004 listed as 0.3). At 1 or more (the default) it prints each
 * value's shortest exact form.
 */
export async function refuseRoundedFloats(db: Kysely<Tables>): Promise<void> {
  const { rows } = await sql<{ digits: number }>`
    select current_setting('extra_float_digits')::int as digits`.execute(db);
  const digits = rows[0]?.digits ?? 1;
  if (digits >= 1) return;
  throw new ConfigError(
    `the database prints float8 values rounded (extra_float_digits = ${digits}): reports would be listed altered. It must be 1 or more: ALTER ROLE … SET extra_float_digits = 1, or remove the setting`,
  );
}

import { PGlite } from "@electric-sql/pglite";
import { Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { PGliteDialect, script } from "../src/store/pglite-dialect.js";

const pglite = new PGlite();
const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
afterAll(async () => {
  await db.destroy();
  await pglite.close();
});

describe("the PGlite dialect", () => {
  it("runs text marked as a script (a migration) as several statements", async () => {
    await script("create table s (x int); insert into s values (1), (2);").execute(db);
    const r = await sql<{ n: number }>`select count(*)::int as n from s`.execute(db);
    expect(r.rows).toEqual([{ n: 2 }]);
  });

  it("refuses several statements in any other query, with or without parameters", async () => {
    await expect(sql`select 1; select 2`.execute(db)).rejects.toThrow(/multiple commands/);
  });

  it("reports zero affected rows as 0, not unknown", async () => {
    const r = await sql`update s set x = 3 where false`.execute(db);
    expect(r.numAffectedRows).toBe(0n);
  });
});

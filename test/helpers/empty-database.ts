import { randomBytes } from "node:crypto";
import pg from "pg";
import { type Database, openDatabase } from "../../src/store/database.js";

/**
 * A database with no tables: PGlite in memory, or a new database on the test server. Unlike
 * `freshDatabase`, not migrated: for the tests of the migrations themselves.
 */
export async function emptyDatabase(): Promise<Database> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl === undefined) return openDatabase({ kind: "pglite", dataDir: undefined });
  const name = `tr_empty_${randomBytes(6).toString("hex")}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({
    kind: "postgres",
    url: url.toString(),
    poolSize: 4,
    statementTimeoutMs: 30_000,
    connectTimeoutMs: 5_000,
  });
  return {
    ...database,
    async close() {
      await database.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

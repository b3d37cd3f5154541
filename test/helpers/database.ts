import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { Kysely } from "kysely";
import pg from "pg";
import type { DatabaseConfig } from "../../src/config.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { migrate } from "../../src/store/migrate.js";
import { PGliteDialect } from "../../src/store/pglite-dialect.js";
import { createStores, type Stores } from "../../src/store/stores.js";
import type { Tables } from "../../src/store/tables.js";

/**
 * The database the suite runs on: in-memory PGlite by default; with TEST_DATABASE_URL set,
 * a fresh PostgreSQL database per call (created on that server, dropped on close).
 */
export const onPostgres = process.env.TEST_DATABASE_URL !== undefined;

export type TestDatabase = Database & { config: DatabaseConfig; stores: Stores };

/** On PostgreSQL: the pool's size and DB_PREPARED_STATEMENTS (defaults 10, on). */
export type TestPool = { size?: number; preparedStatements?: boolean };

export async function freshDatabase(
  options: { migrated?: boolean; pool?: TestPool } = {},
): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl === undefined) {
    const config: DatabaseConfig = { kind: "pglite", dataDir: undefined };
    const template = migrated ? await migratedTemplate() : undefined;
    const database = await openDatabase({ ...config, template });
    return { ...database, config, stores: createStores(database.db) };
  }
  const name = `tr_test_${randomBytes(6).toString("hex")}`;
  await admin(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const config: DatabaseConfig = {
    kind: "postgres",
    url: url.toString(),
    poolSize: options.pool?.size ?? 10,
    statementTimeoutMs: 30_000,
    connectTimeoutMs: 5_000,
    preparedStatements: options.pool?.preparedStatements ?? true,
  };
  const database = await openDatabase(config);
  if (migrated) await migrate(database.db);
  return {
    ...database,
    config,
    // Split queries run split here, even small ones (a server splits only large scopes), so
    // tests cover the split.
    stores: createStores(database.db, {
      parallelism: 4,
      splitAboveMarketDays: 0,
      ping: database.ping,
    }),
    async close() {
      await database.close();
      await admin(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

let template: Promise<Blob> | undefined;

/**
 * A migrated PGlite database's files, made once per test worker: a new in-memory PGlite runs
 * `initdb`, which takes 1.5 to 3 s here, while one started from these files takes about 0.5 s.
 */
function migratedTemplate(): Promise<Blob> {
  template ??= (async () => {
    const pglite = await PGlite.create();
    await migrate(new Kysely<Tables>({ dialect: new PGliteDialect(pglite) }));
    const files = await pglite.dumpDataDir("none");
    await pglite.close();
    return files;
  })();
  return template;
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

import { spawn } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { loadFixture } from "../../src/services/fixtures.js";
import { createSystem } from "../../src/system.js";
import { baseFixture, KEYS, v2Records } from "../helpers/fixture.js";
import { type Cluster, startCluster } from "./helpers/postgres-cluster.js";

// README "PgBouncer": the service through PgBouncer in transaction mode, migrations over a
// direct connection, and the suite's submission tests run through it.

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ pgbouncer: true });
});
afterAll(async () => cluster?.stop());

/** A new database, served through PgBouncer and migrated over a direct connection. */
async function systemThroughPgBouncer(database: string, env: Record<string, string> = {}) {
  await cluster.admin(`create database ${database}`);
  return createSystem(
    loadConfig({
      DATABASE_URL: cluster.pgbouncerUrl(database),
      DATABASE_MIGRATION_URL: cluster.primaryUrl(database),
      REFERENCE_DATA_CHECK_MS: "0",
      LOG_LEVEL: "silent",
      ...env,
    }),
  );
}

describe("PgBouncer in transaction mode", () => {
  it("serves submissions, Idempotency-Key replays, listings and the event producer; migrates directly", async () => {
    const system = await systemThroughPgBouncer("tr");
    const app = await system.http(false);
    try {
      expect(system.applied).toContain("017_read_replica.sql");
      await loadFixture(system.stores, baseFixture(), new Date());
      const post = (records: unknown[], key: string) =>
        app.inject({
          method: "POST",
          url: "/api/v2/report",
          headers: {
            authorization: KEYS.acme,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          payload: JSON.stringify({ data: records }),
        });
      // More requests at once than PgBouncer has server connections for this pool's share.
      const records = v2Records(16);
      const answers = await Promise.all(records.map((r, i) => post([r], `k-${i}`)));
      for (const a of answers) expect(a.statusCode, a.body).toBe(201);
      const replay = await post(records.slice(0, 1), "k-0");
      expect(replay.statusCode).toBe(201);
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      const listed = await app.inject({
        url: "/api/v1/reports",
        headers: { authorization: KEYS.acme },
      });
      expect(listed.json().totalCount).toBe(16);
      // Its pass takes a transaction-level advisory lock: no session lock to leak.
      await expect(system.webhookEventProducer.runOnce()).resolves.toBeGreaterThanOrEqual(0);
    } finally {
      await app.close();
      await system.close();
    }
  });

  it("a named statement PgBouncer's next server connection lacks: the batch runs again unnamed", async () => {
    const system = await systemThroughPgBouncer("tr_named", { DB_POOL_SIZE: "1" });
    const lost: unknown[] = [];
    system.database.preparedStatements.onLost((error) =>
      lost.push((error as { code?: unknown }).code),
    );
    const app = await system.http(false);
    try {
      await loadFixture(system.stores, baseFixture(), new Date());
      const post = (records: unknown[]) =>
        app.inject({
          method: "POST",
          url: "/api/v2/report",
          headers: { authorization: KEYS.acme, "content-type": "application/json" },
          payload: JSON.stringify({ data: records }),
        });
      const records = v2Records(3);
      expect((await post(records.slice(0, 2))).json()).toEqual({
        createdCount: 2,
        updatedCount: 0,
      });
      expect(system.database.preparedStatements.inUse()).toBe(true);
      // This pool has one server connection (one client connection, one statement at a
      // time). PgBouncer hands that idle connection to another client, which empties it of
      // statements: the service's next transaction runs there and finds the name gone.
      const other = new pg.Client({ connectionString: cluster.pgbouncerUrl("tr_named") });
      await other.connect();
      await other.query("deallocate all");
      await other.end();
      const second = await post(records);
      expect(second.statusCode, second.body).toBe(201);
      expect(second.json()).toEqual({ createdCount: 1, updatedCount: 2 });
      expect(lost).toEqual(["26000"]);
      expect(system.database.preparedStatements.inUse()).toBe(false);
      const listed = await app.inject({
        url: "/api/v1/reports",
        headers: { authorization: KEYS.acme },
      });
      expect(listed.json().totalCount).toBe(3);
    } finally {
      await app.close();
      await system.close();
    }
  });

  it("passes the suite's submission and idempotency tests through PgBouncer", async () => {
    const files = [
      "test/submission-storage.test.ts",
      "test/submission-validation.test.ts",
      "test/submission-body.test.ts",
      "test/submission-eligibility.test.ts",
      "test/submission-log.test.ts",
      "test/submission-reference-race.test.ts",
      "test/idempotency.test.ts",
    ];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn("node_modules/.bin/vitest", ["run", ...files], {
        stdio: "inherit",
        env: { ...process.env, TEST_DATABASE_URL: cluster.pgbouncerUrl("postgres") },
      });
      child.on("exit", (exitCode) => resolve(exitCode));
    });
    expect(code).toBe(0);
  }, 1_800_000);
});

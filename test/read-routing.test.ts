import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseReader, lsnValue, replicaLagMs } from "../src/store/read-choice.js";
import { createReadRouter, primaryOnly, type ReadRouting } from "../src/store/read-router.js";
import { createStores, type Stores } from "../src/store/stores.js";
import type { Tables } from "../src/store/tables.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { submitOk } from "./helpers/submission.js";

// README "Read replica": the rules first, then a router over a real database (the primary
// standing in as its own replica: it has always "replayed" its own writes).

const inSync = { reachable: true as const, replayLsn: "0/3000000", lagMs: 0 };

describe("which server a read goes to", () => {
  it("reads on the replica when it is in sync and the caller has no newer write", () => {
    expect(chooseReader({ status: inSync, maxLagMs: 5_000 })).toEqual({ source: "replica" });
    expect(chooseReader({ status: inSync, maxLagMs: 5_000, readAfter: "0/3000000" }).source).toBe(
      "replica",
    );
  });

  it("reads on the primary when the replica has not replayed the caller's last write", () => {
    expect(chooseReader({ status: inSync, maxLagMs: 5_000, readAfter: "0/3000001" })).toEqual({
      source: "primary",
      reason: "own-write",
    });
    // Positions compare as numbers, not as text ("0/A0" is after "0/9F"; "1/0" after "0/FFFFFFFF").
    const at = (replayLsn: string) => ({ ...inSync, replayLsn });
    expect(chooseReader({ status: at("0/9F"), maxLagMs: 1, readAfter: "0/A0" }).source).toBe(
      "primary",
    );
    expect(chooseReader({ status: at("1/0"), maxLagMs: 1, readAfter: "0/FFFFFFFF" }).source).toBe(
      "replica",
    );
  });

  it("reads every key on the primary while the replica lags too far or is unreachable", () => {
    const lagging = { ...inSync, lagMs: 5_001 };
    expect(chooseReader({ status: lagging, maxLagMs: 5_000 }).reason).toBe("lagging");
    expect(chooseReader({ status: { reachable: false }, maxLagMs: 5_000 }).reason).toBe(
      "unreachable",
    );
    expect(chooseReader({ status: undefined, maxLagMs: 5_000 }).source).toBe("primary");
  });

  it("counts no lag when the replica has everything, else the age of its last replay", () => {
    const behind = { primaryLsn: "0/200", replayLsn: "0/100", msSinceLastReplay: 750 };
    expect(replicaLagMs(behind)).toBe(750);
    expect(replicaLagMs({ ...behind, replayLsn: "0/200" })).toBe(0);
    expect(replicaLagMs({ ...behind, msSinceLastReplay: null })).toBe(Number.POSITIVE_INFINITY);
    expect(() => lsnValue("12345")).toThrow(/WAL position/);
  });
});

/** A routing that records what went through it, over the one database. */
function recording(stores: Stores) {
  const log = { reads: [] as (string | undefined)[], writes: [] as string[] };
  const base = primaryOnly(stores);
  const reads: ReadRouting = {
    ...base,
    read: (readAfter, work) => {
      log.reads.push(readAfter);
      return base.read(readAfter, work);
    },
    storesFor: (readAfter) => {
      log.reads.push(readAfter);
      return base.storesFor(readAfter);
    },
    wrote: async (apiKeyId) => {
      log.writes.push(apiKeyId);
    },
  };
  return { reads, log };
}

describe("services choose their reader", () => {
  let t: TestApp;
  let log: ReturnType<typeof recording>["log"];
  beforeAll(async () => {
    t = await startTestApp({
      reads: (database) => {
        const r = recording(database.stores);
        log = r.log;
        return r.reads;
      },
    });
  });
  afterAll(async () => t?.close());

  it("listing, export, scorecards and the report card read through the routing; a 201 is noted", async () => {
    await submitOk(t, 2, [v2Record()]);
    expect(log.writes).toHaveLength(1);
    const before = log.reads.length;
    for (const url of [
      "/api/v1/reports",
      "/api/v1/reports?format=csv",
      "/api/v1/scorecards",
      "/api/v1/scorecards/daily",
      "/api/v1/report-card",
    ]) {
      const response = await t.request({ method: "GET", url, key: KEYS.acme });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    }
    expect(log.reads.length - before).toBe(5);
  });
});

describe("a read router over one database", () => {
  let t: TestApp;
  let router: ReadRouting;
  let replicaStores: Stores;
  beforeAll(async () => {
    t = await startTestApp({
      reads: (database) => {
        replicaStores = createStores(database.db);
        router = createReadRouter({
          primary: database.db,
          replica: database.db,
          primaryStores: database.stores,
          replicaStores,
          maxLagMs: 5_000,
        });
        return router;
      },
    });
  });
  afterAll(async () => t?.close());

  it("hands a key's last write position to authentication, and reads where it is replayed", async () => {
    const before = await t.services.authenticate(KEYS.acme);
    expect(before.readAfter).toBeUndefined();
    await submitOk(t, 2, [v2Record()]);
    const after = await t.services.authenticate(KEYS.acme);
    expect(after.readAfter).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const head = await sql<{
      lsn: string;
    }>`select pg_current_wal_insert_lsn()::text as lsn`.execute(t.database.db);
    expect(lsnValue(after.readAfter ?? "")).toBeLessThanOrEqual(lsnValue(head.rows[0]?.lsn ?? ""));
    // Another key's position is untouched.
    expect((await t.services.authenticate(KEYS.globex)).readAfter).toBeUndefined();
    expect(await router.read(after.readAfter, async (s) => s)).toBe(replicaStores);
    expect(await router.read("FFFFFFFF/0", async (s) => s)).not.toBe(replicaStores);
    expect(await router.replica()).toEqual({ status: "in_use", lagMs: 0 });
  });
});

describe("a read replica that does not answer", () => {
  let t: TestApp;
  let silent: Server;
  const sockets = new Set<Socket>();
  let hung: Kysely<Tables>;
  beforeAll(async () => {
    t = await startTestApp({
      // A key's write position that cannot be recorded (the primary lost between the commit
      // and the note): the batch is stored, and its 201 stands.
      reads: (database) => ({
        ...primaryOnly(database.stores),
        wrote: async () => {
          throw new Error("Connection terminated unexpectedly");
        },
      }),
    });
    // A server that takes connections and never says a word: a hung replica, not a refusing one.
    silent = createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    hung = new Kysely<Tables>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ host: "127.0.0.1", port, user: "x", connectionTimeoutMillis: 600_000 }),
      }),
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await hung?.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await t?.close();
  });

  it("answers /readyz's question at once, as unreachable, without waiting out its timeouts", async () => {
    const router = createReadRouter({
      primary: t.database.db,
      replica: hung,
      primaryStores: t.database.stores,
      replicaStores: createStores(hung),
      maxLagMs: 5_000,
    });
    // The pool would wait 10 minutes for the connection: the answers come from the bound.
    expect(await router.replica()).toEqual({ status: "unreachable", lagMs: null });
    expect(await router.replica()).toEqual({ status: "unreachable", lagMs: null });
    expect(await router.read(undefined, async (stores) => stores)).toBe(t.database.stores);
  });

  it("answers a stored batch 201 when its key's write position cannot be recorded", async () => {
    expect(await submitOk(t, 2, [v2Record({ date: "2024-05-01" })])).toEqual({
      createdCount: 1,
      updatedCount: 0,
    });
    expect(await submitOk(t, 2, [v2Record({ date: "2024-05-01" })])).toEqual({
      createdCount: 0,
      updatedCount: 1,
    });
  });
});

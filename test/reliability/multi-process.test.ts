import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/domain/api-key.js";
import { baseFixture, KEYS, v1Record, v2Record } from "../helpers/fixture.js";
import {
  addDays,
  adminUrl,
  call,
  createDatabase,
  type Server,
  shuffle,
  startServer,
  stopAllServers,
  stopServer,
  writeSeed,
} from "./support.js";

/**
 * Hardening item 2: several server processes on one PostgreSQL, many clients submitting
 * overlapping keys in different orders, v1 and v2 mixed. PostgreSQL only (PGlite is one
 * process by construction): skipped unless TEST_DATABASE_URL is set.
 */

const PROCESSES = 3;
const CLIENTS = 8;
const PASSES = Number(process.env.MULTI_PROCESS_PASSES ?? 3);
const BATCH = 300;
const DAYS = 300;
const EXCHANGES = ["binance", "kraken"]; // both spot: a v1 record has the same key as a v2 one
const KEY_COUNT = DAYS * EXCHANGES.length; // 600
const V1_SHARE = 0.3;
const ROTATED_KEY = "acme-key-to-revoke-0123456789abcdef0123";

type Outcome = { status: number; createdCount: number; updatedCount: number; body: unknown };

describe.skipIf(adminUrl === undefined)("several server processes on one PostgreSQL", () => {
  let dir: string;
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let pool: pg.Pool;
  const servers: Server[] = [];

  beforeAll(async () => {
    if (adminUrl === undefined) return;
    dir = mkdtempSync(join(tmpdir(), "tr-multi-"));
    const fixture = baseFixture();
    fixture.organizations[0]?.apiKeys.push(ROTATED_KEY);
    const seedFile = writeSeed(dir, fixture);
    database = await createDatabase(adminUrl);
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    const url = database.url;
    // Started together: migrations and the seed run concurrently in all three.
    servers.push(
      ...(await Promise.all(
        Array.from({ length: PROCESSES }, () =>
          startServer({ seedFile, env: { DATABASE_URL: url, DB_POOL_SIZE: "10" } }),
        ),
      )),
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => stopServer(s)));
    await stopAllServers();
    await pool?.end();
    await database?.drop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it(`${CLIENTS} clients x ${PASSES} passes over ${KEY_COUNT} keys in random orders: one row per key, every version kept, no conflict reaches a client`, async () => {
    const keys = Array.from({ length: DAYS }, (_, d) => addDays("2023-01-01", d)).flatMap((date) =>
      EXCHANGES.map((exchangeId) => ({ date, exchangeId })),
    );
    let sequence = 0;
    const outcomes: Outcome[] = [];
    const startedAt = performance.now();

    const client = async (c: number) => {
      for (let pass = 0; pass < PASSES; pass++) {
        const order = shuffle([...keys]);
        for (let start = 0; start < order.length; start += BATCH) {
          const slice = order.slice(start, start + BATCH);
          const version = Math.random() < V1_SHARE ? 1 : 2;
          const data = slice.map((k) => {
            sequence++;
            const common = { ...k, baseCoinId: "chainlink", quoteCoinId: "tether" };
            return version === 1
              ? v1Record({ ...common, bidDepth50: sequence })
              : v2Record({ ...common, bidDepth50: sequence });
          });
          const server = servers[(c + pass + start / BATCH) % servers.length] as Server;
          try {
            const reply = await call(server.base, `/api/v${version}/report`, {
              key: KEYS.acme,
              body: { data },
              timeoutMs: 60_000,
            });
            const counts = reply.body as { createdCount?: number; updatedCount?: number };
            outcomes.push({
              status: reply.status,
              createdCount: counts.createdCount ?? 0,
              updatedCount: counts.updatedCount ?? 0,
              body: reply.body,
            });
          } catch (error) {
            // No answer at all (socket closed, deadline passed): as bad as a 5xx.
            const cause = (error as { cause?: unknown }).cause;
            outcomes.push({
              status: 0,
              createdCount: 0,
              updatedCount: 0,
              body: String(cause ?? error),
            });
          }
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    const seconds = (performance.now() - startedAt) / 1000;

    const failures = outcomes.filter((o) => o.status !== 201);
    const byStatus = new Map<number, number>();
    for (const o of outcomes) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
    console.log(
      `[multi-process] ${PROCESSES} processes, ${CLIENTS} clients, ${outcomes.length} batches ` +
        `(${outcomes.length * BATCH} records over ${KEY_COUNT} distinct keys) in ` +
        `${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(byStatus))}`,
    );
    expect(failures.map((f) => [f.status, f.body])).toEqual([]);
    const created = outcomes.reduce((sum, o) => sum + o.createdCount, 0);
    const accepted = outcomes.reduce((sum, o) => sum + o.createdCount + o.updatedCount, 0);
    expect(accepted).toBe(CLIENTS * PASSES * KEY_COUNT);
    expect(created).toBe(KEY_COUNT);

    const counts = await pool.query<{
      reports: number;
      distinct_keys: number;
      versions: number;
      submissions: number;
      logged_created: number;
      logged_updated: number;
    }>(`select
          (select count(*)::int from reports) as reports,
          (select count(*)::int from (select distinct organization_id, date, exchange_id,
             base_coin_id, quote_key, instrument_type from reports) k) as distinct_keys,
          (select count(*)::int from report_versions) as versions,
          (select count(*)::int from submissions where not dry_run) as submissions,
          (select coalesce(sum(created_count), 0)::int from submissions) as logged_created,
          (select coalesce(sum(updated_count), 0)::int from submissions) as logged_updated`);
    const row = counts.rows[0];
    expect(row).toEqual({
      reports: KEY_COUNT,
      distinct_keys: KEY_COUNT,
      versions: accepted,
      submissions: outcomes.length,
      logged_created: created,
      logged_updated: accepted - created,
    });

    // The latest accepted version of each key is its current value (no lost update), and
    // every submitted value sits in the history exactly once.
    const latest = await pool.query<{ mismatched: number; values: number; distinct: number }>(
      `select
          (select count(*)::int from reports r join lateral (
             select v.bid_depth_50, v.schema_version from report_versions v
             where v.report_id = r.id order by v.id desc limit 1) v on true
           where v.bid_depth_50 <> r.bid_depth_50 or v.schema_version <> r.schema_version)
           as mismatched,
          (select count(*)::int from report_versions) as values,
          (select count(distinct bid_depth_50)::int from report_versions) as distinct`,
    );
    expect(latest.rows[0]).toEqual({ mismatched: 0, values: sequence, distinct: sequence });

    // Conflicts PostgreSQL detected and the service retried (visible to nobody else).
    const stats = await pool.query<{ deadlocks: number; conflicts: number }>(
      `select deadlocks::int, conflicts::int from pg_stat_database
         where datname = current_database()`,
    );
    console.log(
      `[multi-process] database: ${row?.reports} rows, ${row?.versions} versions, ` +
        `createdCount sum ${created}; deadlocks PostgreSQL detected (and the service retried): ` +
        `${stats.rows[0]?.deadlocks ?? "?"}`,
    );
  }, 240_000);

  it("a key revoked through SQL is refused by every process on its next request", async () => {
    for (const server of servers) {
      const reply = await call(server.base, "/api/v1/projects", { key: ROTATED_KEY });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    }
    await pool.query("update api_keys set revoked_at = now() where key_hash = $1", [
      hashApiKey(ROTATED_KEY),
    ]);
    for (const server of servers) {
      const reply = await call(server.base, "/api/v1/projects", { key: ROTATED_KEY });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ statusCode: 401, message: "API key has been revoked" });
      const submit = await call(server.base, "/api/v2/report", {
        key: ROTATED_KEY,
        body: { data: [v2Record({ date: "2022-01-01" })] },
      });
      expect(submit.status).toBe(401);
    }
    // The other key of the same organization is untouched.
    const still = await call((servers[0] as Server).base, "/api/v1/projects", { key: KEYS.acme });
    expect(still.status).toBe(200);
  });
});

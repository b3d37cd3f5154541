/**
 * `npm run bench:rate-limit-store`: the per-request cost of a rate limit shared by several
 * nodes (README "Several nodes"): one counted request in PostgreSQL (the statement of
 * store/rate-limit-store.ts, on an unlogged table) beside the same in Redis (the script of
 * store/redis-rate-limit-store.ts: INCR, PEXPIRE on the first count, PTTL in one round trip) and
 * beside the in-memory counter, alternating in rounds so that the
 * machine's other load falls on all alike. Redis is optional (REDIS_URL, default
 * redis://127.0.0.1:6379): without it only PostgreSQL and memory are measured.
 */

import { randomBytes } from "node:crypto";
import { localCounters } from "../src/http/abuse/rate-counters.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createRateLimitStore } from "../src/store/rate-limit-store.js";
import { createRedisRateLimitStore } from "../src/store/redis-rate-limit-store.js";
import { adminQuery, databaseUrl } from "./admin-database.js";
import { median } from "./server.js";

const REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const ROUNDS = 10;
const HITS = Number(process.env.HITS ?? 500);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);

/** The Redis store of src/store/redis-rate-limit-store.ts, or undefined when Redis does not answer. */
async function redisStore() {
  const store = createRedisRateLimitStore({
    url: REDIS,
    keyPrefix: `tr:bench:${randomBytes(4).toString("hex")}:`,
    commandTimeoutMs: 5_000,
  });
  await store.ready();
  const answers = await store.windows.hit("probe", "probe", 1_000).then(
    () => true,
    () => false,
  );
  if (answers) return store;
  await store.close();
  return undefined;
}

async function timed(hit: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < HITS) await hit(next++);
    }),
  );
  return (performance.now() - started) / HITS;
}

const name = `tr_bench_rl_${randomBytes(4).toString("hex")}`;
await adminQuery(`create database ${name}`);
const url = databaseUrl(name);
const database = await openDatabase({
  kind: "postgres",
  url,
  poolSize: CONCURRENCY,
  statementTimeoutMs: 15_000,
  connectTimeoutMs: 5_000,
});
try {
  await migrate(database.db);
  const store = createRateLimitStore(database.db);
  const redis = await redisStore();
  const memory = localCounters("key", 1_000_000, 60_000);
  const totals: Record<string, number[]> = { postgres: [], redis: [], memory: [] };
  const keys = 50; // budgets hit in turn: several API keys at once
  for (let round = 0; round < ROUNDS; round++) {
    totals.postgres?.push(await timed((i) => store.hit("key", `k${i % keys}`, 60_000)));
    if (redis !== undefined)
      totals.redis?.push(await timed((i) => redis.windows.hit("key", `k${i % keys}`, 60_000)));
    totals.memory?.push(await timed((i) => memory.hit(`k${i % keys}`)));
  }
  await redis?.close();
  for (const [store, rounds] of Object.entries(totals)) {
    if (rounds.length === 0) continue;
    process.stdout.write(
      `${store}: ${(median(rounds) * 1000).toFixed(1)} µs per counted request (median of ${ROUNDS} rounds of ${HITS}, ${CONCURRENCY} at once)\n`,
    );
  }
} finally {
  await database.close();
  await adminQuery(`drop database if exists ${name} with (force)`);
}

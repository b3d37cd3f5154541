import type { Config } from "../../config.js";
import type { Database } from "../../store/database.js";
import { createRateLimitStore } from "../../store/rate-limit-store.js";
import { createRedisRateLimitStore } from "../../store/redis-rate-limit-store.js";
import {
  localCounters,
  type RateCounters,
  type StoreReachability,
  sharedCounters,
} from "./rate-counters.js";

/** The rate counters, opened with the first HTTP API only: other CLI commands never open Redis. */
export function lazyRateCounters(config: Config, database: Database) {
  let opened: ReturnType<typeof rateCountersOf> | undefined;
  const reachability: StoreReachability = {};
  return {
    reachability,
    open: async () => {
      opened ??= rateCountersOf(config, database, reachability);
      return (await opened).rateCounters;
    },
    close: async () => {
      if (opened !== undefined) await (await opened).closeRateCounters();
    },
  };
}

/** Where rate limits count: this process's memory, the database or Redis (RATE_LIMIT_STORE). */
async function rateCountersOf(config: Config, database: Database, watch: StoreReachability) {
  if (config.rateLimitStore === "redis" && config.redisUrl !== undefined) {
    const redis = createRedisRateLimitStore({ url: config.redisUrl });
    await redis.ready();
    return { rateCounters: sharedCounters(redis.windows, watch), closeRateCounters: redis.close };
  }
  const rateCounters: RateCounters =
    config.rateLimitStore === "database"
      ? sharedCounters(createRateLimitStore(database.db), watch)
      : localCounters;
  return { rateCounters, closeRateCounters: async () => {} };
}

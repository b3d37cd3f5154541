import { Redis } from "ioredis";
import type { StoredWindow } from "./rate-limit-store.js";

// One round trip per counted request: the first count of a window sets its expiry, so the
// window is timed by Redis's clock and ends by itself (nothing to sweep). A key found without
// an expiry (set by hand, or by another client) gets one rather than counting forever.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

const PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return nil end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`;

export type RedisRateLimitOptions = {
  url: string;
  /** Prefix of every key (tests use one of their own). */
  keyPrefix?: string;
  /** A command without an answer within it fails, and the request is counted in memory. */
  commandTimeoutMs?: number;
};

/**
 * Fixed-window counters in Redis (`REDIS_URL`), shared by every process on it: `tr:rl:<name>:<key>`
 * holds the count of the open window and expires with it. While Redis is unreachable commands
 * fail at once (no offline queue) and the client reconnects in the background, so a request
 * never waits on it longer than the command timeout.
 */
export function createRedisRateLimitStore(options: RedisRateLimitOptions) {
  const redis = new Redis(options.url, {
    keyPrefix: options.keyPrefix ?? "tr:rl:",
    commandTimeout: options.commandTimeoutMs ?? 250,
    connectTimeout: 1_000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  // Connection errors show as failed commands (counted in memory); without a listener ioredis
  // would print each reconnection attempt's error.
  redis.on("error", () => {});
  const windows = {
    async hit(name: string, key: string, windowMs: number): Promise<StoredWindow> {
      const [count, ttl] = (await redis.eval(HIT, 1, `${name}:${key}`, windowMs)) as number[];
      return { count: Number(count), resetsInMs: Number(ttl) };
    },
    async peek(name: string, key: string): Promise<StoredWindow | undefined> {
      const found = (await redis.eval(PEEK, 1, `${name}:${key}`)) as number[] | null;
      if (found === null) return undefined;
      return { count: Number(found[0]), resetsInMs: Math.max(0, Number(found[1])) };
    },
    async sweep() {
      return 0;
    },
  };
  return {
    windows,
    /** Resolves once connected, or after the connect timeout (requests then count in memory). */
    ready: () =>
      new Promise<void>((resolve) => {
        if (redis.status === "ready") return resolve();
        const done = () => {
          clearTimeout(timer);
          redis.off("ready", done);
          redis.off("error", done);
          resolve();
        };
        const timer = setTimeout(done, 1_000);
        redis.once("ready", done);
        redis.once("error", done);
      }),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

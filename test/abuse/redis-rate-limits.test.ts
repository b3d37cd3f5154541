import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { type SharedWindows, sharedCounters } from "../../src/http/abuse/rate-counters.js";
import { buildApp } from "../../src/http/app.js";
import { createRedisRateLimitStore } from "../../src/store/redis-rate-limit-store.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { KEYS } from "../helpers/fixture.js";
import { startMetricsSystem } from "../helpers/metrics.js";

/**
 * RATE_LIMIT_STORE=redis: two apps (two nodes) on one Redis (REDIS_URL, default the local one)
 * count every request in the same windows; an unreachable Redis falls back to memory.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `tr:test:${randomBytes(6).toString("hex")}:`;
const stores: ReturnType<typeof createRedisRateLimitStore>[] = [];
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await t.close();
});

async function store(url = REDIS_URL) {
  const created = createRedisRateLimitStore({ url, keyPrefix: prefix });
  await created.ready();
  stores.push(created);
  return created;
}

async function node(windows?: SharedWindows) {
  return buildApp({
    services: t.services,
    http: loadConfig({ RATE_LIMIT_PER_MINUTE: "4" }).http,
    logger: false,
    rateCounters: sharedCounters(windows ?? (await store()).windows),
  });
}

async function statusesOf(nodes: Awaited<ReturnType<typeof node>>[], requests: number) {
  const statuses: number[] = [];
  for (let i = 0; i < requests; i++) {
    const response = await nodes[i % nodes.length]?.inject({
      method: "GET",
      url: "/api/v1/exchanges",
      headers: { authorization: KEYS.globex },
    });
    statuses.push(response?.statusCode ?? 0);
  }
  return statuses;
}

describe("rate limits shared through Redis", () => {
  it("refuses the request past the limit whichever node it reaches", async () => {
    const nodes = [await node(), await node()];
    try {
      expect(await statusesOf(nodes, 6)).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
    }
  });

  it("counts within a window and opens a new one once it expired", async () => {
    const { windows } = await store();
    expect((await windows.hit("test", "k", 60_000)).count).toBe(1);
    const second = await windows.hit("test", "k", 60_000);
    expect(second.count).toBe(2);
    expect(second.resetsInMs).toBeGreaterThan(0);
    expect(second.resetsInMs).toBeLessThanOrEqual(60_000);
    expect(await windows.peek("test", "k")).toMatchObject({ count: 2 });
    expect(await windows.peek("test", "never")).toBeUndefined();
    await windows.hit("test", "short", 5);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await windows.peek("test", "short")).toBeUndefined();
    expect((await windows.hit("test", "short", 60_000)).count).toBe(1);
  });

  it("counts in memory when Redis is unreachable", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const unreachable = (await store(`redis://127.0.0.1:${closedPort}`)).windows;
    await expect(unreachable.hit("test", "k", 60_000)).rejects.toThrow();
    const app = await node(unreachable);
    try {
      // Per node, in memory: the 5th request is refused, not let through or failed with a 5xx.
      expect(await statusesOf([app], 5)).toEqual([200, 200, 200, 200, 429]);
    } finally {
      await app.close();
    }
  });

  it("is connected to only once the HTTP API is built: other CLI commands never open it", async () => {
    // Only Redis clients count (their first bytes are a RESP array, `*`): with other test
    // files running beside this one, a client of theirs still retrying a closed port that this
    // listener was given could connect too.
    let connections = 0;
    const listener = createServer((socket) => {
      socket.once("data", (first: Buffer) => {
        if (first[0] === 0x2a) connections++;
        socket.destroy();
      });
    });
    const port = await new Promise<number>((resolve) =>
      listener.listen(0, "127.0.0.1", () => resolve((listener.address() as { port: number }).port)),
    );
    const { system } = await startMetricsSystem({ REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(connections).toBe(0);
      const app = await system.http(false);
      await app.close();
      for (let waited = 0; connections === 0 && waited < 2_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(connections).toBeGreaterThan(0);
    } finally {
      await system.close();
      listener.close();
    }
  });

  it("is chosen by REDIS_URL, and RATE_LIMIT_STORE=redis without it does not start", () => {
    expect(loadConfig({ REDIS_URL }).rateLimitStore).toBe("redis");
    expect(loadConfig({ REDIS_URL, RATE_LIMIT_STORE: "database" }).rateLimitStore).toBe("database");
    expect(loadConfig({}).rateLimitStore).toBe("memory");
    expect(() => loadConfig({ RATE_LIMIT_STORE: "redis" })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_STORE: "redis" })).toThrow(/needs REDIS_URL/);
  });
});

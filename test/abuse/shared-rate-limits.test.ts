import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config.js";
import { REACHABLE_AGAIN_AFTER_MS, sharedCounters } from "../../src/http/abuse/rate-counters.js";
import { buildApp } from "../../src/http/app.js";
import { createRateLimitStore } from "../../src/store/rate-limit-store.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { KEYS } from "../helpers/fixture.js";

/**
 * RATE_LIMIT_STORE=database: two apps (two nodes) on one database count every request in the
 * same windows, so the limit is the sum over both; /readyz answers 503 once draining. The
 * cluster suite does the same with real processes (test/cluster/two-nodes.test.ts).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function node(env: Record<string, string>, draining?: () => boolean) {
  return buildApp({
    services: t.services,
    http: loadConfig(env).http,
    logger: false,
    rateCounters: sharedCounters(createRateLimitStore(t.database.db)),
    draining,
  });
}

describe("rate limits shared through the database", () => {
  it("refuses the request past the limit whichever node it reaches", async () => {
    const env = { RATE_LIMIT_PER_MINUTE: "4" };
    const nodes = [await node(env), await node(env)];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const response = await nodes[i % 2]?.inject({
          method: "GET",
          url: "/api/v1/exchanges",
          headers: { authorization: KEYS.globex },
        });
        statuses.push(response?.statusCode ?? 0);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
    }
  });

  it("opens a new window once the last one ended, and sweeps ended windows", async () => {
    const store = createRateLimitStore(t.database.db);
    expect((await store.hit("test", "k", 60_000)).count).toBe(1);
    expect((await store.hit("test", "k", 60_000)).count).toBe(2);
    expect(await store.peek("test", "k")).toMatchObject({ count: 2 });
    await store.hit("test", "short", 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.peek("test", "short")).toBeUndefined();
    expect((await store.hit("test", "short", 1)).count).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    expect(await store.peek("test", "k")).toMatchObject({ count: 2 });
  });

  it("answers 503 on /readyz once draining, and closes connections", async () => {
    let draining = false;
    const app = await node({}, () => draining);
    try {
      expect((await app.inject({ url: "/readyz" })).statusCode).toBe(200);
      draining = true;
      const readyz = await app.inject({ url: "/readyz" });
      expect(readyz.statusCode).toBe(503);
      expect(readyz.headers.connection).toBe("close");
      const healthz = await app.inject({ url: "/healthz" });
      expect(healthz.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe("a shared store that stops answering", () => {
  it("is reported once when it fails, and once when it has answered for 30 s without failing", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      let down = false;
      const store = createRateLimitStore(t.database.db);
      const refused = () => Promise.reject(new Error("connection refused"));
      const flaky = {
        hit: (name: string, key: string, windowMs: number) =>
          down ? refused() : store.hit(name, key, windowMs),
        peek: (name: string, key: string) => (down ? refused() : store.peek(name, key)),
        sweep: () => store.sweep(),
      };
      const changes: [boolean, string | undefined][] = [];
      const counters = sharedCounters(flaky, {
        listener: (reachable, error) => changes.push([reachable, (error as Error)?.message]),
      });
      const counter = counters("flaky", 5, 60_000);
      expect((await counter.hit("k")).remaining).toBe(4);
      down = true;
      for (let i = 0; i < 3; i++) expect((await counter.hit("k")).allowed).toBe(true);
      expect(await counter.exhaustedFor("k")).toBeUndefined();
      // In memory meanwhile: its own window of 5, of which 3 are used.
      expect((await counter.hit("k")).remaining).toBe(1);
      // Answering now and then, failing in between: still the one report.
      for (let i = 0; i < 3; i++) {
        down = false;
        // The shared window again, where only the first hit was counted.
        expect((await counter.hit("k")).remaining).toBe(3 - i);
        vi.advanceTimersByTime(10_000);
        down = true;
        await counter.hit("k");
      }
      expect(changes).toEqual([[false, "connection refused"]]);
      down = false;
      await counter.exhaustedFor("k");
      vi.advanceTimersByTime(REACHABLE_AGAIN_AFTER_MS);
      await counter.exhaustedFor("k");
      await counter.exhaustedFor("k");
      expect(changes).toEqual([
        [false, "connection refused"],
        [true, undefined],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("counts in memory, after waiting a second, when the store hangs rather than refuses", async () => {
    const hangs = () => new Promise<never>(() => {});
    const changes: boolean[] = [];
    const counters = sharedCounters(
      { hit: hangs, peek: hangs, sweep: async () => 0 },
      { listener: (reachable) => changes.push(reachable) },
    );
    const counter = counters("hung", 5, 60_000);
    // Each call waits a second, then counts here: without the bound it would never end.
    expect(await counter.hit("k")).toMatchObject({ allowed: true, remaining: 4 });
    expect(await counter.exhaustedFor("k")).toBeUndefined();
    expect(changes).toEqual([false]);
  });
});

import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import type { Services } from "../../src/services/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { onPostgres } from "../helpers/database.js";
import { KEYS } from "../helpers/fixture.js";

let t: TestApp | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await t?.close();
  t = undefined;
});

/** The app over the test database, with `ready` counting its calls (database pings). */
async function countingApp(t: TestApp, env: Record<string, string>) {
  const pings = { count: 0 };
  const services: Services = {
    ...t.services,
    ready: () => {
      pings.count++;
      return t.services.ready();
    },
  };
  const app = await buildApp({ services, http: loadConfig(env).http, logger: false });
  const get = (url: string, remoteAddress = "127.0.0.2", authorization?: string) =>
    app.inject({
      method: "GET",
      url,
      remoteAddress,
      headers: authorization === undefined ? {} : { authorization },
    });
  return { app, pings, get };
}

describe("health probes", () => {
  it("pings the database at most once a second however many /readyz calls come", async () => {
    t = await startTestApp();
    const { app, pings, get } = await countingApp(t, {});
    try {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
      const together = await Promise.all(Array.from({ length: 50 }, () => get("/readyz")));
      expect(together.every((r) => r.statusCode === 200)).toBe(true);
      for (let i = 0; i < 50; i++) expect((await get("/readyz")).statusCode).toBe(200);
      expect(pings.count).toBe(1);
      vi.setSystemTime(new Date("2026-01-01T00:00:00.999Z"));
      expect((await get("/readyz")).statusCode).toBe(200);
      expect(pings.count).toBe(1);
      vi.setSystemTime(new Date("2026-01-01T00:00:01Z"));
      expect((await get("/readyz")).statusCode).toBe(200);
      expect(pings.count).toBe(2);
    } finally {
      await app.close();
    }
  });

  it("reuses a failed readiness answer too: 503 without a new ping", async () => {
    t = await startTestApp();
    let pings = 0;
    const services: Services = {
      ...t.services,
      ready: async () => {
        pings++;
        throw new Error("connection refused");
      },
    };
    const app = await buildApp({ services, http: loadConfig({}).http, logger: false });
    try {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
      for (let i = 0; i < 10; i++)
        expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(503);
      expect(pings).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("gives the probes a budget per address of their own", async () => {
    t = await startTestApp();
    const { app, get } = await countingApp(t, {
      HEALTH_PROBES_PER_ADDRESS_PER_MINUTE: "5",
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "3",
    });
    try {
      const probes = [];
      for (let i = 0; i < 7; i++) probes.push(await get(i % 2 === 0 ? "/healthz" : "/readyz"));
      expect(probes.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(probes[6]?.json()).toEqual({
        statusCode: 429,
        error: "Too Many Requests",
        message: expect.stringMatching(/5 health probes per minute from one address; retry in/),
      });
      // The address's other requests have their own budget, and spending it spares the probes
      // of another address.
      for (let i = 0; i < 3; i++)
        expect((await get("/api/v1/exchanges", "127.0.0.2", KEYS.acme)).statusCode).toBe(200);
      expect((await get("/api/v1/exchanges", "127.0.0.2", KEYS.acme)).statusCode).toBe(429);
      expect((await get("/healthz", "127.0.0.3")).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it.skipIf(!onPostgres)(
    "answers ready while every pooled connection waits on a lock (PostgreSQL)",
    async () => {
      t = await startTestApp({ pool: { size: 2 } });
      const { config } = t.database;
      if (config.kind !== "postgres") throw new Error("PostgreSQL only");
      const [locker, watcher] = [1, 2].map(() => new pg.Client({ connectionString: config.url }));
      await Promise.all([locker?.connect(), watcher?.connect()]);
      try {
        await locker?.query("begin; lock table reports in access exclusive mode");
        const listings = [1, 2].map(() =>
          t?.request({ method: "GET", url: "/api/v1/reports", key: KEYS.acme }),
        );
        await untilTwoWait(watcher as pg.Client);
        const readiness = await t.request({ method: "GET", url: "/readyz" });
        expect(readiness.statusCode).toBe(200);
        await locker?.query("commit");
        for (const listing of await Promise.all(listings)) expect(listing?.statusCode).toBe(200);
      } finally {
        await Promise.all([locker?.end(), watcher?.end()]);
      }
    },
  );
});

/** Until two sessions of the client's database wait for a lock (the pool of two, both busy). */
async function untilTwoWait(watcher: pg.Client) {
  for (;;) {
    const { rows } = await watcher.query(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if (rows[0].n >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(onPostgres)("a database that refuses new connections (PostgreSQL)", () => {
  /** Runs `statement` as the test server's admin (not in the app's database). */
  async function asAdmin(statement: string) {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  it("is a 503 with Retry-After on the API, as on /readyz: not accepting connections, renamed", async () => {
    t = await startTestApp();
    const app = t;
    const name = new URL(
      t.database.config.kind === "postgres" ? t.database.config.url : "",
    ).pathname.slice(1);
    const disconnect = `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`;
    const listing = () => app.request({ url: "/api/v1/reports", key: KEYS.acme });
    expect((await listing()).statusCode).toBe(200);
    for (const [refuse, allow] of [
      [
        `alter database ${name} allow_connections false`,
        `alter database ${name} allow_connections true`,
      ],
      [
        `alter database ${name} rename to ${name}_moved`,
        `alter database ${name}_moved rename to ${name}`,
      ],
    ] as const) {
      if (refuse.includes("rename")) await asAdmin(disconnect);
      await asAdmin(refuse);
      await asAdmin(disconnect);
      try {
        const refused = await listing();
        expect(refused.statusCode, refuse).toBe(503);
        expect(refused.headers["retry-after"]).toBeDefined();
      } finally {
        await asAdmin(allow);
      }
      expect((await listing()).statusCode, allow).toBe(200);
    }
  });
});

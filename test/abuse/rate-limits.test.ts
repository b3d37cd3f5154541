import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { hashApiKey } from "../../src/domain/api-key.js";
import { buildApp } from "../../src/http/app.js";
import type { Services } from "../../src/services/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { injectSignIn } from "../helpers/dashboard.js";
import { KEYS } from "../helpers/fixture.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The app over the test database, with `authenticate` counting its calls (database lookups). */
async function countingApp(t: TestApp, env: Record<string, string>) {
  const lookups = { count: 0 };
  const services: Services = {
    ...t.services,
    authenticate: (authorization) => {
      lookups.count++;
      return t.services.authenticate(authorization);
    },
  };
  const app = await buildApp({ services, http: loadConfig(env).http, logger: false });
  /** The dashboard's sign-in form, posted from `remoteAddress`. */
  const signIn = (key: string, remoteAddress: string) =>
    app.inject({
      method: "POST",
      url: "/app/sign-in",
      remoteAddress,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams({ key }).toString(),
    });
  const get = (authorization: string | undefined, remoteAddress = "127.0.0.1") =>
    app.inject({
      method: "GET",
      url: "/api/v1/exchanges",
      remoteAddress,
      headers: authorization === undefined ? {} : { authorization },
    });
  return { app, lookups, get, signIn };
}

function expect429(response: {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): unknown;
}) {
  expect(response.statusCode).toBe(429);
  expect(Number(response.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(response.json()).toEqual({
    statusCode: 429,
    error: "Too Many Requests",
    message: expect.stringMatching(/ per minute.*; retry in \d+ seconds$/),
  });
}

describe("rate limits before and after authentication", () => {
  it("limits failed authentications per address; once limited they cost no database lookup", async () => {
    t = await startTestApp();
    const { app, lookups, get } = await countingApp(t, { AUTH_FAILURES_PER_MINUTE: "5" });
    try {
      const bad = "not-a-key-of-anyone-0123456789abcdef";
      const answers = [];
      for (let i = 0; i < 8; i++) answers.push(await get(bad, "127.0.0.2"));
      expect(answers.map((r) => r.statusCode)).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      expect429(answers[7] as never);
      expect(answers[7]?.json().message).toMatch(/failed authentications/);
      expect(lookups.count).toBe(5);
      // Random keys from the limited address are refused without a lookup too.
      for (let i = 0; i < 20; i++)
        expect((await get(randomBytes(20).toString("hex"), "127.0.0.2")).statusCode).toBe(429);
      expect(lookups.count).toBe(5);
      // Another address is not affected.
      expect((await get(KEYS.acme, "127.0.0.1")).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("counts failed dashboard sign-ins and failed API keys of an address in one budget", async () => {
    t = await startTestApp();
    const { app, get, signIn: posted } = await countingApp(t, { AUTH_FAILURES_PER_MINUTE: "4" });
    const signIn = (key: string, remoteAddress = "127.0.0.3") => posted(key, remoteAddress);
    try {
      expect((await signIn("wrong-1")).statusCode).toBe(401);
      expect((await signIn("wrong-2")).statusCode).toBe(401);
      expect((await get("wrong-3", "127.0.0.3")).statusCode).toBe(401);
      expect((await get("wrong-4", "127.0.0.3")).statusCode).toBe(401);
      // Four failures through either door: both are closed now.
      expect((await get("wrong-5", "127.0.0.3")).statusCode).toBe(429);
      const refused = await signIn("wrong-6");
      expect(refused.statusCode).toBe(429);
      expect(refused.body).toContain("Too many failed sign-ins from your address");
      // As the API's 429: when to come back, at most the failure window's minute.
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
      // The page says the same wait as the header.
      const wait = Number(refused.headers["retry-after"]);
      expect(refused.body).toContain(`retry in ${wait === 1 ? "1 second" : `${wait} seconds`}.`);
      // Another address is not affected.
      expect((await signIn("wrong-7", "127.0.0.4")).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it("gives a burst of wrong keys sent at once no more lookups than the budget, through either door", async () => {
    t = await startTestApp();
    const {
      app,
      lookups,
      get,
      signIn: posted,
    } = await countingApp(t, {
      AUTH_FAILURES_PER_MINUTE: "3",
    });
    const signIn = (key: string, remoteAddress = "127.0.0.5") => posted(key, remoteAddress);
    try {
      // The budget used to be read before the lookups and counted after them: each of these
      // got a lookup and a 401.
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 === 0 ? get(`wrong-key-${i}-0123456789abcdef`, "127.0.0.5") : signIn(`wrong-${i}`),
        ),
      );
      const statuses = answers.map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 401)).toHaveLength(3);
      expect(statuses.filter((s) => s === 429)).toHaveLength(37);
      expect(lookups.count).toBeLessThanOrEqual(3);
      // Once they have failed, the address waits the window out as before.
      expect429((await get("wrong-again", "127.0.0.5")) as never);
      // Good keys sent at once from a fresh address are all served.
      const good = await Promise.all(Array.from({ length: 10 }, () => get(KEYS.acme, "127.0.0.6")));
      expect(good.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    } finally {
      await app.close();
    }
  });

  it("counts a dashboard session's pages against its key's RATE_LIMIT_PER_MINUTE, with the API's requests", async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: "8" } });
    const session = await injectSignIn(t, KEYS.acme);
    const api = [];
    for (let i = 0; i < 8; i++)
      api.push((await t.request({ url: "/api/v1/exchanges", key: KEYS.acme })).statusCode);
    expect(api.at(-1)).toBe(429);
    // The same stored key through its session: the export and every page are refused too.
    const refused = await session.get("/app/reports.csv");
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.body).toContain("Rate limit exceeded: 8 requests per minute for your API key");
    expect((await session.get("/app/overview")).statusCode).toBe(429);
    // Another key's budget is its own.
    expect((await t.request({ url: "/api/v1/exchanges", key: KEYS.globex })).statusCode).toBe(200);
  });

  it("still serves a key that authenticated before from an address that is limited", async () => {
    t = await startTestApp();
    const { app, get } = await countingApp(t, { AUTH_FAILURES_PER_MINUTE: "3" });
    try {
      expect((await get(KEYS.acme, "127.0.0.2")).statusCode).toBe(200);
      for (let i = 0; i < 3; i++)
        expect((await get(`wrong-${i}`, "127.0.0.2")).statusCode).toBe(401);
      expect((await get("wrong-again", "127.0.0.2")).statusCode).toBe(429);
      expect((await get(KEYS.acme, "127.0.0.2")).statusCode).toBe(200);
      // A key never seen from there waits like the attacker (no lookup is made to find it good).
      expect((await get(KEYS.globex, "127.0.0.2")).statusCode).toBe(429);
    } finally {
      await app.close();
    }
  });

  it("signs in a key that authenticated before from an address that is limited, through either door", async () => {
    t = await startTestApp();
    const { app, get, signIn: posted } = await countingApp(t, { AUTH_FAILURES_PER_MINUTE: "3" });
    const signIn = (key: string, remoteAddress = "127.0.0.7") => posted(key, remoteAddress);
    try {
      expect((await get(KEYS.acme, "127.0.0.7")).statusCode).toBe(200);
      // Typed as an Authorization header's value: the key is what is known, not the text.
      expect((await signIn(`Bearer ${KEYS.globex}`)).statusCode).toBe(303);
      for (let i = 0; i < 3; i++) expect((await signIn(`wrong-${i}`)).statusCode).toBe(401);
      expect((await signIn("wrong-again")).statusCode).toBe(429);
      // Known through the API, known through the sign-in: both still get a session.
      for (const key of [KEYS.acme, KEYS.globex]) {
        const signedIn = await signIn(key);
        expect(signedIn.statusCode, key).toBe(303);
        expect(String(signedIn.headers["set-cookie"])).toMatch(/HttpOnly/);
      }
      // The key signed in first is spared on the API too.
      expect((await get(KEYS.globex, "127.0.0.7")).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("forgets a key that authenticated once when it fails later (revoked): it waits like any other", async () => {
    t = await startTestApp();
    const { app, lookups, get } = await countingApp(t, { AUTH_FAILURES_PER_MINUTE: "3" });
    try {
      expect((await get(KEYS.acme, "127.0.0.2")).statusCode).toBe(200);
      await t.database.db
        .updateTable("api_keys")
        .set({ revoked_at: new Date() })
        .where("key_hash", "=", hashApiKey(KEYS.acme))
        .execute();
      for (let i = 0; i < 3; i++) expect((await get(KEYS.acme, "127.0.0.2")).statusCode).toBe(401);
      const before = lookups.count;
      for (let i = 0; i < 5; i++) expect429((await get(KEYS.acme, "127.0.0.2")) as never);
      expect(lookups.count, "a revoked key still cost a lookup from a blocked address").toBe(
        before,
      );
    } finally {
      await app.close();
    }
  });

  it("counts requests per client address before authentication", async () => {
    t = await startTestApp();
    const { app, lookups, get } = await countingApp(t, { RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "4" });
    try {
      for (let i = 0; i < 4; i++) expect((await get(undefined, "127.0.0.3")).statusCode).toBe(401);
      const before = lookups.count;
      const limited = await get(KEYS.acme, "127.0.0.3");
      expect429(limited);
      expect(lookups.count).toBe(before);
      expect((await app.inject({ url: "/healthz", remoteAddress: "127.0.0.3" })).statusCode).toBe(
        200,
      );
      expect((await get(KEYS.acme, "127.0.0.4")).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("keys the per-key budget on the stored key: 5,100 random Authorization values cannot reset it", async () => {
    t = await startTestApp();
    const { app, get } = await countingApp(t, {
      RATE_LIMIT_PER_MINUTE: "3",
      AUTH_FAILURES_PER_MINUTE: "1000000",
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
    });
    try {
      for (let i = 0; i < 3; i++) expect((await get(KEYS.acme)).statusCode).toBe(200);
      expect429(await get(`Bearer ${KEYS.acme}`));
      // The old limiter kept 5,000 entries keyed by the header, also on routes without
      // authentication: this flood evicted the exhausted key's entry.
      for (let round = 0; round < 102; round++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () =>
            app.inject({
              url: "/docs",
              headers: { authorization: `Bearer ${randomBytes(16).toString("hex")}` },
            }),
          ),
        );
        expect(answers.every((r) => r.statusCode === 200)).toBe(true);
      }
      expect((await get(`Bearer ${randomBytes(16).toString("hex")}`)).statusCode).toBe(401);
      expect429(await get(KEYS.acme));
      expect((await get(KEYS.globex)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);
});

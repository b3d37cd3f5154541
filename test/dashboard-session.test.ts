import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { injectSignIn } from "./helpers/dashboard.js";
import { KEYS } from "./helpers/fixture.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const MINUTE = 60_000;

async function appAt(clock: { now: Date }, env: Record<string, string> = {}) {
  t = await startTestApp({ now: () => clock.now, env });
  return t;
}

/** A GET /app answered with the sign-in form (the session is gone). */
const signedOut = (response: { body: string }) => response.body.includes('action="/app/sign-in"');

/** POST /app/sign-in with `key` as the form sends it. */
const postSignIn = (app: TestApp, key: string, headers: Record<string, string> = {}) =>
  app.request({
    method: "POST",
    url: "/app/sign-in",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    payload: `key=${key}`,
  });

const later = (clock: { now: Date }, ms: number) => {
  clock.now = new Date(clock.now.getTime() + ms);
};

describe("dashboard sign-in", () => {
  it("shows the sign-in form at /app without a session", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const page = await app.request({ url: "/app" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain('<form method="post" action="/app/sign-in"');
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
  });

  it("opens a session with an HttpOnly, SameSite=Strict cookie (not Secure over plain http)", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const response = await postSignIn(app, KEYS.acme);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/app");
    const cookie = String(response.headers["set-cookie"]);
    expect(cookie).toMatch(/^tr_session=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
  });

  it("sets a Secure __Host- cookie when PUBLIC_URL is https", async () => {
    const app = await appAt(
      { now: new Date("2025-03-10T09:00:00Z") },
      { PUBLIC_URL: "https://reports.example.com" },
    );
    const response = await postSignIn(app, KEYS.acme);
    const cookie = String(response.headers["set-cookie"]);
    expect(cookie).toMatch(/^__Host-tr_session=/);
    expect(cookie).toContain("Secure");
  });

  it("answers a wrong or revoked key with the form and the API's message, and no cookie", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    for (const [key, message] of [
      ["not-a-key-0123456789abcdef0123456789", "Invalid API key"],
      [KEYS.acmeRevoked, "API key has been revoked"],
    ] as const) {
      const response = await postSignIn(app, key);
      expect(response.statusCode).toBe(401);
      expect(response.body).toContain(message);
      expect(response.headers["set-cookie"]).toBeUndefined();
    }
  });

  it("says what is wrong with an empty key and with one longer than any key", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    for (const [key, message] of [
      ["", "Enter an API key."],
      ["k".repeat(513), "That is not an API key: a key is at most 512 characters."],
    ] as const) {
      const response = await postSignIn(app, key);
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain(message);
    }
  });

  it("refuses a sign-in posted from another origin", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const response = await postSignIn(app, KEYS.acme, { origin: "https://evil.example" });
    expect(response.statusCode).toBe(403);
    expect(response.headers["set-cookie"]).toBeUndefined();
  });

  it("accepts a sign-in posted from PUBLIC_URL's page behind a proxy that rewrites Host", async () => {
    const app = await appAt(
      { now: new Date("2025-03-10T09:00:00Z") },
      { PUBLIC_URL: "https://reports.example.com" },
    );
    const response = await postSignIn(app, KEYS.acme, {
      origin: "https://reports.example.com",
      host: "127.0.0.1:8080",
    });
    expect(response.statusCode).toBe(303);
  });

  it("answers an unknown dashboard page with an HTML 404", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const response = await app.request({ url: "/app/no-such-page" });
    expect(response.statusCode).toBe(404);
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(response.body).toContain("There is no page /app/no-such-page.");
  });

  it("keeps the API answering 415 to a form body", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const response = await app.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "data=1",
    });
    expect(response.statusCode).toBe(415);
  });
});

describe("dashboard sessions", () => {
  it("end after 30 idle minutes, and are kept alive by use", async () => {
    const clock = { now: new Date("2025-03-10T09:00:00Z") };
    const app = await appAt(clock);
    const session = await injectSignIn(app, KEYS.acme);
    later(clock, 29 * MINUTE);
    expect(signedOut(await session.get("/app"))).toBe(false);
    later(clock, 29 * MINUTE);
    expect(signedOut(await session.get("/app"))).toBe(false);
    later(clock, 30 * MINUTE);
    const ended = await session.get("/app");
    expect(signedOut(ended)).toBe(true);
    expect(String(ended.headers["set-cookie"])).toMatch(/^tr_session=;/);
  });

  it("end 12 hours after sign-in however busy, or as configured", async () => {
    const clock = { now: new Date("2025-03-10T09:00:00Z") };
    const app = await appAt(clock, {
      DASHBOARD_SESSION_IDLE_MINUTES: "10",
      DASHBOARD_SESSION_MAX_HOURS: "1",
    });
    const session = await injectSignIn(app, KEYS.acme);
    for (let i = 0; i < 5; i++) {
      later(clock, 9 * MINUTE);
      expect(signedOut(await session.get("/app"))).toBe(false);
    }
    later(clock, 9 * MINUTE);
    expect(signedOut(await session.get("/app"))).toBe(false);
    later(clock, 6 * MINUTE);
    expect(String((await session.get("/app")).headers["set-cookie"])).toMatch(/^tr_session=;/);
  });

  it("end at once when their API key is revoked", async () => {
    const clock = { now: new Date("2025-03-10T09:00:00Z") };
    const app = await appAt(clock);
    const session = await injectSignIn(app, KEYS.acme);
    await app.database.stores.organizations.revokeApiKey({ organizationId: "acme" }, clock.now);
    const page = await session.get("/app");
    expect(page.body).toContain('action="/app/sign-in"');
    expect(String(page.headers["set-cookie"])).toMatch(/^tr_session=;/);
  });

  it("sign out with the session's CSRF token only", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const session = await injectSignIn(app, KEYS.acme);
    expect((await session.post("/app/sign-out", {}, null)).statusCode).toBe(403);
    expect((await session.post("/app/sign-out", {}, "forged")).statusCode).toBe(403);
    expect(signedOut(await session.get("/app"))).toBe(false);
    const out = await session.post("/app/sign-out");
    expect(out.statusCode).toBe(303);
    expect(String(out.headers["set-cookie"])).toMatch(/^tr_session=;/);
    expect(signedOut(await session.get("/app"))).toBe(true);
  });

  it("refuse a form with the right token from another origin", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const session = await injectSignIn(app, KEYS.acme);
    const response = await app.request({
      method: "POST",
      url: "/app/sign-out",
      headers: {
        cookie: session.cookie,
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: `csrf=${session.csrf}`,
    });
    expect(response.statusCode).toBe(403);
  });

  it("end when another sign-in is made over them", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const first = await injectSignIn(app, KEYS.acme);
    const again = await postSignIn(app, KEYS.acme, { cookie: first.cookie });
    expect(again.statusCode).toBe(303);
    expect(String(again.headers["set-cookie"])).not.toContain(first.cookie);
    expect(signedOut(await first.get("/app"))).toBe(true);
    const rows = await app.database.db.selectFrom("dashboard_sessions").selectAll().execute();
    expect(rows).toHaveLength(1);
  });

  it("are stored as hashes only", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const session = await injectSignIn(app, KEYS.acme);
    const token = session.cookie.split("=")[1] ?? "";
    const rows = await app.database.db.selectFrom("dashboard_sessions").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).not.toContain(token);
    expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("the dashboard and the API document", () => {
  it("keeps /app out of the OpenAPI document", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    const document = (await app.request({ url: "/openapi.json" })).json();
    expect(Object.keys(document.paths).filter((p) => p.startsWith("/app"))).toEqual([]);
  });

  it("serves its assets (and uPlot's) from this server", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    for (const name of [
      "dashboard.css",
      "dashboard-charts.css",
      "dashboard-charts.js",
      "uPlot.min.css",
      "uPlot.iife.min.js",
    ]) {
      const response = await app.request({ url: `/app/assets/${name}` });
      expect(response.statusCode, name).toBe(200);
    }
    expect((await app.request({ url: "/app/assets/..%2Fpackage.json" })).statusCode).toBe(404);
  });

  it("loads no script on a page without charts (only the market page draws any)", async () => {
    const app = await appAt({ now: new Date("2025-03-10T09:00:00Z") });
    expect((await app.request({ url: "/app" })).body).not.toContain("<script");
    const session = await injectSignIn(app, KEYS.acme);
    const reports = await session.get("/app/reports");
    expect(reports.statusCode).toBe(200);
    expect(reports.body).not.toContain("<script");
  });
});

import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../src/domain/api-key.js";
import { createOrganizationStore } from "../src/store/organization-store.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { listenOnLoopback, sendRaw } from "./helpers/raw-http.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const API_ENDPOINTS = [
  { method: "GET", url: "/api/v1/reports" },
  { method: "GET", url: "/api/v1/projects" },
  { method: "GET", url: "/api/v1/exchanges" },
  { method: "POST", url: "/api/v2/report", payload: { data: [v2Record()] } },
  { method: "POST", url: "/api/v1/report", payload: { data: [v1Record()] } },
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectUnauthorized(response: { statusCode: number; json(): unknown }) {
  expect(response.statusCode).toBe(401);
  const body = response.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["message", "statusCode"]);
  expect(body.statusCode).toBe(401);
  expect(typeof body.message).toBe("string");
  expect(body).not.toHaveProperty("error");
}

describe("authentication", () => {
  it("refuses a request without a key with 401, a string message and no error field", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/reports" });
    expectUnauthorized(response);
  });

  it("refuses an empty Authorization header", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      headers: { authorization: "   " },
    });
    expectUnauthorized(response);
  });

  it("refuses a key it does not know", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      key: "not-a-real-key-0123456789",
    });
    expectUnauthorized(response);
  });

  it("refuses a bare Bearer scheme without a key", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      headers: { authorization: "Bearer" },
    });
    expectUnauthorized(response);
  });

  it("refuses a revoked key", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      key: KEYS.acmeRevoked,
    });
    expectUnauthorized(response);
  });

  it("accepts the key itself as the Authorization header", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/reports", key: KEYS.acme });
    expect(response.statusCode).toBe(200);
  });

  it("accepts the key after a Bearer scheme, in any case", async () => {
    for (const scheme of ["Bearer", "bearer"]) {
      const response = await t.request({
        method: "GET",
        url: "/api/v1/reports",
        headers: { authorization: `${scheme} ${KEYS.acme}` },
      });
      expect(response.statusCode).toBe(200);
    }
  });

  it("does not accept a key that differs only in letter case", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      key: KEYS.acme.toUpperCase(),
    });
    expectUnauthorized(response);
  });

  it("refuses a key on the very next request after it is revoked through the store", async () => {
    const key = "to-be-revoked-key-0123456789";
    const organizations = createOrganizationStore(t.database.db);
    await organizations.addApiKey({
      organizationId: "acme",
      hash: hashApiKey(key),
      prefix: key.slice(0, 12),
      label: "test",
    });
    const before = await t.request({ method: "GET", url: "/api/v1/projects", key });
    expect(before.statusCode).toBe(200);
    const revoked = await organizations.revokeApiKey({ hash: hashApiKey(key) }, new Date());
    expect(revoked).toBe(1);
    expectUnauthorized(await t.request({ method: "GET", url: "/api/v1/projects", key }));
  });

  it("refuses a key on the very next request after revoked_at is set in SQL", async () => {
    const key = "sql-revoked-key-0123456789";
    await createOrganizationStore(t.database.db).addApiKey({
      organizationId: "globex",
      hash: hashApiKey(key),
      prefix: key.slice(0, 12),
      label: "test",
    });
    expect((await t.request({ method: "GET", url: "/api/v1/reports", key })).statusCode).toBe(200);
    await sql`update api_keys set revoked_at = now() where key_hash = ${hashApiKey(key)}`.execute(
      t.database.db,
    );
    expectUnauthorized(await t.request({ method: "GET", url: "/api/v1/reports", key }));
  });

  it("requires a key on every /api endpoint", async () => {
    for (const endpoint of API_ENDPOINTS) {
      const response = await t.request({ ...endpoint });
      expectUnauthorized(response);
      const wrong = await t.request({ ...endpoint, key: "wrong-key-0123456789" });
      expectUnauthorized(wrong);
    }
  });

  it("checks the key before looking at the request body", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    expectUnauthorized(response);
  });

  it("stores nothing when a submission is refused for its key", async () => {
    await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acmeRevoked,
      payload: { data: [v2Record({ date: "2024-02-02" })] },
    });
    const list = await t.request({
      method: "GET",
      url: "/api/v1/reports?dateGte=2024-02-02&dateLte=2024-02-02",
      key: KEYS.acme,
    });
    expect(list.json().totalCount).toBe(0);
  });

  it("refuses two Authorization headers, of which Node would read the first", async () => {
    const app = await startTestApp();
    try {
      const port = await listenOnLoopback(app.app);
      const body = JSON.stringify({ data: [v2Record({ date: "2024-02-03" })] });
      const submit = (authorization: string) =>
        sendRaw(
          port,
          "POST /api/v2/report HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
            `${authorization}Content-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
      for (const [first, second] of [
        [KEYS.acme, KEYS.globex],
        [KEYS.acme, KEYS.acme],
        [KEYS.acme, ""],
      ]) {
        const answer = await submit(`Authorization: ${first}\r\nauthorization: ${second}\r\n`);
        expect(answer.status).toBe(401);
        expect(JSON.parse(answer.body)).toEqual({
          message: "Expected one Authorization header, received several",
          statusCode: 401,
        });
      }
      expect((await submit(`Authorization: ${KEYS.acme}\r\n`)).status).toBe(201);
      const stored = await sql<{ n: number }>`
        select count(*)::int as n from reports where date = '2024-02-03'`.execute(app.database.db);
      expect(stored.rows[0]?.n).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("answers /healthz and /readyz without a key", async () => {
    for (const url of ["/healthz", "/readyz"]) {
      const response = await t.request({ method: "GET", url });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: "ok" });
    }
  });
});

describe("request ids", () => {
  it("gives every response an x-request-id header, also on errors", async () => {
    const ok = await t.request({ method: "GET", url: "/healthz" });
    const unauthorized = await t.request({ method: "GET", url: "/api/v1/reports" });
    const notFound = await t.request({ method: "GET", url: "/nowhere" });
    for (const response of [ok, unauthorized, notFound]) {
      expect(response.headers["x-request-id"]).toMatch(UUID);
    }
    expect(ok.headers["x-request-id"]).not.toBe(unauthorized.headers["x-request-id"]);
  });

  it("echoes a valid request id the client sent", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/projects",
      key: KEYS.acme,
      headers: { "x-request-id": "client-trace_42.a" },
    });
    expect(response.headers["x-request-id"]).toBe("client-trace_42.a");
  });

  it("replaces a client request id that is malformed or too long", async () => {
    for (const given of ["has spaces in it", "x".repeat(101), "semi;colon"]) {
      const response = await t.request({
        method: "GET",
        url: "/healthz",
        headers: { "x-request-id": given },
      });
      expect(response.headers["x-request-id"]).toMatch(UUID);
    }
  });
});

import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config.js";
import { marketMakerCaller } from "../src/domain/caller.js";
import { UnavailableError } from "../src/domain/errors.js";
import { buildApp } from "../src/http/app.js";
import type { Services } from "../src/services/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";

let t: TestApp;
let databaseClosed = false;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => (databaseClosed ? t?.app.close() : t?.close()));

const caller = marketMakerCaller("acme");

/** The app over services whose authentication passes and whose exchange listing fails. */
async function appWhoseExchangesFail(failure: () => Error): Promise<FastifyInstance> {
  const services: Services = {
    ...t.services,
    authenticate: async () => caller,
    listExchanges: async () => {
      throw failure();
    },
  };
  return buildApp({ services, http: loadConfig({}).http, logger: false });
}

function expectNoInternals(text: string) {
  expect(text).not.toMatch(/select|secret|from |stack|\bat \S+ \(|\.ts:\d+|node_modules/i);
}

describe("client error bodies", () => {
  it("answers an unknown route with 404 in the error shape", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/nothing?x=1", key: KEYS.acme });
    expect(response.statusCode).toBe(404);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(["error", "message", "statusCode"]);
    expect(body).toMatchObject({ statusCode: 404, error: "Not Found" });
    expect(typeof body.message).toBe("string");
  });

  it("answers an unknown route with 404 even without a key", async () => {
    const response = await t.request({ method: "DELETE", url: "/api/v1/reports" });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ statusCode: 404, error: "Not Found" });
  });

  it("answers an unknown route with 404 whatever its JSON body, an empty or malformed one too", async () => {
    for (const [method, url] of [
      ["POST", "/api/v1/nothing"],
      ["PUT", "/api/v1/reports"],
    ] as const) {
      for (const payload of ["", "{", '{"data": []}']) {
        const response = await t.request({
          method,
          url,
          key: KEYS.acme,
          headers: { "content-type": "application/json" },
          payload,
        });
        expect(response.statusCode, `${method} ${url} ${JSON.stringify(payload)}`).toBe(404);
        expect(response.json()).toMatchObject({ statusCode: 404, error: "Not Found" });
      }
    }
  });

  it("answers an invalid submission with 400 and one problem per field", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record({ bidDepth50: undefined, askDepth50: "1" })] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: [
        { path: "data.0.bidDepth50", message: "Required" },
        { path: "data.0.askDepth50", message: "Expected number, received string" },
      ],
    });
  });

  it("answers malformed JSON with 400 and the array form", async () => {
    for (const payload of ['{"data": [', "", "nul"]) {
      const response = await t.request({
        method: "POST",
        url: "/api/v2/report",
        key: KEYS.acme,
        headers: { "content-type": "application/json" },
        payload,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        statusCode: 400,
        error: "Bad Request",
        message: [{ message: "Malformed JSON body" }],
      });
    }
  });

  it("answers a body over 2 MiB with 413", async () => {
    const payload = JSON.stringify({ data: [], pad: "x".repeat(2 * 1024 * 1024) });
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      headers: { "content-type": "application/json" },
      payload,
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ statusCode: 413, error: "Payload Too Large" });
    expect(typeof response.json().message).toBe("string");
  });

  it("answers a non-JSON content type with 415", async () => {
    for (const contentType of ["text/plain", "application/xml", "text/csv"]) {
      const response = await t.request({
        method: "POST",
        url: "/api/v1/report",
        key: KEYS.acme,
        headers: { "content-type": contentType },
        payload: "date,exchangeId\n2025-01-01,binance",
      });
      expect(response.statusCode, contentType).toBe(415);
      expect(response.json()).toMatchObject({ statusCode: 415, error: "Unsupported Media Type" });
      expect(typeof response.json().message).toBe("string");
    }
  });

  it("answers a body without a content type with 415", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: Buffer.from(JSON.stringify({ data: [v2Record()] })),
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ statusCode: 415, error: "Unsupported Media Type" });
  });

  it("accepts JSON with a charset parameter", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      headers: { "content-type": "application/json; charset=utf-8" },
      payload: JSON.stringify({ data: [v2Record()] }),
      query: { unused: "1" },
    });
    expect(response.statusCode).toBe(201);
  });
});

describe("server error bodies", () => {
  it("answers an unexpected failure with 500 and shows no internals", async () => {
    const app = await appWhoseExchangesFail(() => new Error("select * from secret"));
    try {
      const response = await app.inject({ method: "GET", url: "/api/v1/exchanges" });
      expect(response.statusCode).toBe(500);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(["error", "message", "statusCode"]);
      expect(body).toMatchObject({ statusCode: 500, error: "Internal Server Error" });
      expect(typeof body.message).toBe("string");
      expectNoInternals(response.body);
      expect(response.headers["x-request-id"]).toBeTruthy();
    } finally {
      await app.close();
    }
  });

  it("hides the details of a failure that carries a 5xx status of its own", async () => {
    const app = await appWhoseExchangesFail(() =>
      Object.assign(new Error("relation secret does not exist; select 1"), { statusCode: 502 }),
    );
    try {
      const response = await app.inject({ method: "GET", url: "/api/v1/exchanges" });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toMatchObject({ statusCode: 500, error: "Internal Server Error" });
      expectNoInternals(response.body);
    } finally {
      await app.close();
    }
  });

  it("answers an unavailable database with 503 and a retry-after header", async () => {
    const app = await appWhoseExchangesFail(
      () => new UnavailableError("database unavailable", { cause: new Error("select secret") }),
    );
    try {
      const response = await app.inject({ method: "GET", url: "/api/v1/exchanges" });
      expect(response.statusCode).toBe(503);
      expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(["error", "message", "statusCode"]);
      expect(body).toMatchObject({ statusCode: 503, error: "Service Unavailable" });
      expectNoInternals(response.body);
    } finally {
      await app.close();
    }
  });
});

describe("rate limiting", () => {
  it("answers 429 in the error shape once a key spends its budget, however it is written", async () => {
    const http = { ...loadConfig({}).http, rateLimitPerMinute: 2 };
    const app = await buildApp({ services: t.services, http, logger: false });
    try {
      const send = (authorization: string) =>
        app.inject({ method: "GET", url: "/api/v1/exchanges", headers: { authorization } });
      expect((await send(KEYS.acme)).statusCode).toBe(200);
      expect((await send(`Bearer ${KEYS.acme}`)).statusCode).toBe(200);
      const limited = await send(`  ${KEYS.acme} `);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toMatchObject({ statusCode: 429, error: "Too Many Requests" });
      expect(typeof limited.json().message).toBe("string");
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      expect((await send(KEYS.globex)).statusCode).toBe(200);
      for (let i = 0; i < 3; i++) {
        expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
      }
    } finally {
      await app.close();
    }
  });
});

// Last: it closes this file's database.
describe("readiness", () => {
  it("answers /readyz with 200 while the database is reachable", async () => {
    const response = await t.request({ method: "GET", url: "/readyz" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ok" });
  });

  it("answers /readyz with 503 in the 5xx shape once the database is closed", async () => {
    databaseClosed = true;
    await t.database.close();
    // Readiness is reused for a second (one ping a second however many probes): past it.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 1_000 });
    const response = await t.request({ method: "GET", url: "/readyz" }).finally(() => {
      vi.useRealTimers();
    });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ statusCode: 503, error: "Service Unavailable" });
    expect(typeof response.json().message).toBe("string");
    expectNoInternals(response.body);
    const health = await t.request({ method: "GET", url: "/healthz" });
    expect(health.statusCode).toBe(200);
  });
});

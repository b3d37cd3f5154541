import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * Ids in paths (webhooks, deliveries, submissions): whatever their length or encoding, the
 * answer is the API's, in its shape and with its headers; never the router's bare 414 or 400.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const longId = "a".repeat(101);
const paths = [
  ["GET", "/api/v1/webhooks/{101 characters}", `/api/v1/webhooks/${longId}`],
  ["PATCH", "/api/v1/webhooks/{101 characters}", `/api/v1/webhooks/${longId}`],
  ["DELETE", "/api/v1/webhooks/{101 characters}", `/api/v1/webhooks/${longId}`],
  ["POST", "/api/v1/webhooks/{101 characters}/test", `/api/v1/webhooks/${longId}/test`],
  ["GET", "/api/v1/webhooks/{101 characters}/deliveries", `/api/v1/webhooks/${longId}/deliveries`],
  [
    "POST",
    "/api/v1/webhooks/{101}/deliveries/{101}/retry",
    `/api/v1/webhooks/${longId}/deliveries/${longId}/retry`,
  ],
  ["GET", "/api/v1/submissions/{101 characters}", `/api/v1/submissions/${longId}`],
  ["GET", "/api/v1/submissions/{5,000 characters}", `/api/v1/submissions/${"b".repeat(5_000)}`],
] as const;

function expectApiHeaders(headers: Record<string, unknown>) {
  expect(headers["x-request-id"]).toEqual(expect.any(String));
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["cache-control"]).toBe("no-store");
}

describe("ids in paths", () => {
  it.each(
    paths,
  )("%s %s: an id over 100 characters names nothing (404 with a key, 401 without)", async (method, _name, url) => {
    const body = method === "PATCH" ? { payload: { description: "x" } } : {};
    const found = await t.request({ method, url, key: KEYS.acme, ...body });
    expect(found.statusCode, found.body).toBe(404);
    expect(found.json()).toMatchObject({ statusCode: 404, error: "Not Found" });
    expectApiHeaders(found.headers);
    const anonymous = await t.request({ method, url, key: null, ...body });
    expect(anonymous.statusCode).toBe(401);
  });

  it.each([
    ["GET", "/api/v1/webhooks/%00"],
    ["DELETE", "/api/v1/webhooks/%ED%A0%80"],
    ["POST", "/api/v1/webhooks/%00/test"],
    ["GET", "/api/v1/webhooks/%00/deliveries"],
    ["POST", "/api/v1/webhooks/%00/deliveries/%00/retry"],
    ["GET", "/api/v1/submissions/%00"],
  ] as const)("%s %s: an id the database cannot hold names nothing either (404)", async (method, url) => {
    const response = await t.request({ method, url, key: KEYS.acme });
    expect(response.statusCode, response.body).toBe(404);
    expectApiHeaders(response.headers);
  });

  it.each([
    ["GET", "/api/v1/webhooks/%E0%A4%A"],
    ["DELETE", "/api/v1/webhooks/%E0%A4%A"],
    ["GET", "/api/v1/submissions/%ZZ"],
  ] as const)("%s %s: a path that cannot be decoded is a 404 in the API's shape", async (method, url) => {
    for (const key of [KEYS.acme, null]) {
      const response = await t.request({ method, url, key });
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toEqual({
        statusCode: 404,
        error: "Not Found",
        message: "Not found: the path has an invalid percent-encoding",
      });
      expectApiHeaders(response.headers);
    }
  });

  it("an id longer than the router takes (16,384 characters) is a 404 in the API's shape too", async () => {
    // Over HTTP only where Node is allowed headers over 16 KiB (--max-http-header-size).
    for (const key of [KEYS.acme, null]) {
      const url = `/api/v1/submissions/${"a".repeat(16_385)}`;
      const response = await t.request({ method: "GET", url, key });
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toEqual({
        statusCode: 404,
        error: "Not Found",
        message: "Not found: the path has a segment longer than any id",
      });
      expectApiHeaders(response.headers);
    }
  });

  it("an unknown route of the API is a 404 that is not cached either", async () => {
    const response = await t.request({ method: "PUT", url: "/api/v1/reports", key: KEYS.acme });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: "Route PUT /api/v1/reports not found",
    });
    expectApiHeaders(response.headers);
  });
});

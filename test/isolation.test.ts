import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";

/**
 * OWASP API1/API2: every endpoint answers for the caller's organization only, and nothing
 * in any answer names another organization or shows internals.
 */
let t: TestApp;
const acmeRecords = [v2Record({ date: "2024-05-01" }), v2Record({ date: "2024-05-02" })];

beforeAll(async () => {
  t = await startTestApp();
  const stored = await t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    payload: { data: acmeRecords },
  });
  expect(stored.json()).toEqual({ createdCount: 2, updatedCount: 0 });
});
afterAll(async () => t?.close());

const everyEndpoint = [
  { method: "GET" as const, url: "/api/v1/reports" },
  { method: "GET" as const, url: "/api/v1/reports?baseCoinId=chainlink&exchangeId=binance" },
  { method: "GET" as const, url: "/api/v1/projects" },
  { method: "GET" as const, url: "/api/v1/exchanges" },
  {
    method: "POST" as const,
    url: "/api/v2/report",
    payload: { data: [v2Record({ date: "2024-06-01" })] },
  },
  {
    method: "POST" as const,
    url: "/api/v1/report",
    payload: { data: [v1Record({ date: "2024-06-01" })] },
  },
];

describe("tenant isolation", () => {
  it("another organization's submission of the same keys creates its own records", async () => {
    const dry = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.globex,
      headers: { "x-dry-run": "true" },
      payload: { data: acmeRecords },
    });
    // A dry run does not reveal that acme has these keys.
    expect(dry.json()).toEqual({ createdCount: 2, updatedCount: 0 });
    const real = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.globex,
      payload: { data: acmeRecords.map((r) => ({ ...r, bidDepth50: 1 })) },
    });
    expect(real.json()).toEqual({ createdCount: 2, updatedCount: 0 });
    const acme = await t.request({
      method: "GET",
      url: "/api/v1/reports?dateLte=2024-05-31",
      key: KEYS.acme,
    });
    expect(acme.json().items.map((i: { bidDepth50: number }) => i.bidDepth50)).toEqual([
      4000, 4000,
    ]);
  });

  it("answers every endpoint without naming another organization or its records", async () => {
    for (const request of everyEndpoint) {
      const response = await t.request({ ...request, key: KEYS.globex });
      expect(response.statusCode).toBeLessThan(300);
      expect(response.body).not.toMatch(/acme/i);
      expect(response.body).not.toMatch(/uniswap/);
    }
    const projects = await t.request({ method: "GET", url: "/api/v1/projects", key: KEYS.globex });
    expect(projects.json().items.map((p: { id: string }) => p.id)).toEqual(["chainlink"]);
  });

  it("refuses every endpoint without a valid key, with no internals in the answer", async () => {
    for (const request of everyEndpoint) {
      for (const key of [null, "not-a-key", KEYS.acmeRevoked, `${KEYS.acme}x`]) {
        const response = await t.request({ ...request, key });
        expect(response.statusCode).toBe(401);
        expect(Object.keys(response.json()).sort()).toEqual(["message", "statusCode"]);
        expect(response.body).not.toMatch(/select|stack|\.ts:|acme/i);
      }
    }
  });

  it("never lets a caller choose the organization through the body or query", async () => {
    const sneaky = await t.request({
      method: "POST",
      url: "/api/v2/report?organizationId=acme",
      key: KEYS.globex,
      payload: {
        organizationId: "acme",
        data: [{ ...v2Record({ date: "2024-07-01" }), organizationId: "acme" }],
      },
    });
    expect(sneaky.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    const acme = await t.request({
      method: "GET",
      url: "/api/v1/reports?dateGte=2024-07-01&dateLte=2024-07-01",
      key: KEYS.acme,
    });
    expect(acme.json().totalCount).toBe(0);
    const list = await t.request({
      method: "GET",
      url: "/api/v1/reports?organizationId=acme",
      key: KEYS.globex,
    });
    expect(list.body).not.toMatch(/acme/i);
  });
});

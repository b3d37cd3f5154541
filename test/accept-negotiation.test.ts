import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefersCsv } from "../src/http/negotiate.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Records } from "./helpers/fixture.js";

describe("choosing CSV or JSON for the listing by Accept", () => {
  it.each([
    [undefined, false],
    ["", false],
    ["*/*", false],
    ["application/json", false],
    ["text/html", false],
    ["text/csv", true],
    ["TEXT/CSV", true],
    ["text/csv; charset=utf-8", true],
    ["text/csv;header=present", true],
    ["text/*", true],
    ["text/csv, application/json", true],
    ["text/csv;q=0.5, application/json;q=0.5", true],
    ["application/json;q=0.5, text/csv;q=0.5", false],
    ["text/csv, */*", true],
    ["*/*, text/csv", true],
    ["application/json, text/csv", false],
    ["text/csv;q=0.1, application/json", false],
    ["application/json;q=0.5, text/csv", true],
    ["application/json;q=0.9, text/csv;q=0.8", false],
    ["text/csv;q=0, */*", false],
    // On equal q-values the more specific range wins, before the order (RFC 9110 12.5.1).
    ["text/*, application/json", false],
    ["application/json, text/*", false],
    ["*/*, application/json", false],
    ["application/*, text/csv", true],
    ["text/*;q=0.5, application/json;q=0.5", false],
    ["application/json;q=0.5, text/*", true],
    ["application/*", false],
  ])("Accept %j prefers CSV: %s", (accept, csv) => {
    expect(prefersCsv(accept)).toBe(csv);
  });
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const stored = await t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    payload: { data: v2Records(2) },
  });
  expect(stored.statusCode).toBe(201);
});
afterAll(async () => t?.close());

describe("GET /api/v1/reports honours q-values", () => {
  it("answers JSON to text/csv;q=0.1, application/json", async () => {
    const response = await t.request({
      url: "/api/v1/reports",
      key: KEYS.acme,
      headers: { accept: "text/csv;q=0.1, application/json" },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(response.json().totalCount).toBe(2);
  });

  it.each([
    ["text/*, application/json", "application/json; charset=utf-8"],
    ["text/*", "text/csv; charset=utf-8"],
  ])("answers %s with %s (the more specific range wins on equal q)", async (accept, type) => {
    const response = await t.request({
      url: "/api/v1/reports",
      key: KEYS.acme,
      headers: { accept },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe(type);
  });

  it("answers CSV to application/json;q=0.5, text/csv", async () => {
    const response = await t.request({
      url: "/api/v1/reports",
      key: KEYS.acme,
      headers: { accept: "application/json;q=0.5, text/csv" },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(response.body.trim().split("\r\n")).toHaveLength(3);
  });
});

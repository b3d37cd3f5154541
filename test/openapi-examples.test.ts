import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * The 400 example of each operation with a query string is an answer the service gives: the
 * request below, sent, gets exactly the documented body.
 */
let t: TestApp;
let document: {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};
beforeAll(async () => {
  t = await startTestApp({ now: () => new Date("2026-11-23T12:00:00Z") });
  await t.app.ready();
  document = t.app.swagger() as never;
});
afterAll(async () => t?.close());

function example400(path: string, method = "get"): unknown {
  const response = document.paths[path]?.[method]?.responses["400"] as {
    content: Record<string, { examples?: Record<string, { value: unknown }>; example?: unknown }>;
  };
  const media = response.content["application/json"];
  return media?.example ?? Object.values(media?.examples ?? {})[0]?.value;
}

const cases: [string, string][] = [
  ["/api/v1/reports", "/api/v1/reports?pageSize=501"],
  ["/api/v1/markets", "/api/v1/markets?pageSize=1001"],
  ["/api/v1/obligations", `/api/v1/obligations?baseCoinId=${"x".repeat(201)}`],
  ["/api/v1/scorecards", "/api/v1/scorecards?dateGte=2026-11-30&dateLte=2026-11-01"],
  ["/api/v1/scorecards/daily", "/api/v1/scorecards/daily?dateGte=2026-11-30&dateLte=2026-11-01"],
  ["/api/v1/submissions", "/api/v1/submissions?status=pending"],
  ["/api/v1/report-card", "/api/v1/report-card?month=3000-01"],
];

describe("the documented 400 examples of queries", () => {
  it.each(cases)("%s: %s answers the example", async (path, url) => {
    const response = await t.request({ url, key: KEYS.acme });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(example400(path));
  });

  it("GET /api/v1/webhooks/{id}/deliveries: pageSize=501 answers the example", async () => {
    const created = await t.request({
      method: "POST",
      url: "/api/v1/webhooks",
      key: KEYS.acme,
      payload: { url: "https://93.184.215.14/hooks", events: ["*"] },
    });
    const response = await t.request({
      url: `/api/v1/webhooks/${created.json().id}/deliveries?pageSize=501`,
      key: KEYS.acme,
    });
    expect(response.json()).toEqual(example400("/api/v1/webhooks/{id}/deliveries"));
  });

  it("POST /api/v1/webhooks: an unknown event type answers the example", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v1/webhooks",
      key: KEYS.acme,
      payload: { url: "https://93.184.215.14/hooks", events: ["nope"] },
    });
    expect(response.json()).toEqual(example400("/api/v1/webhooks", "post"));
  });
});

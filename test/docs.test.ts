import { existsSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const response = await t.app.inject({ url: "/openapi.json" });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe("3.1.0");
  });

  it("describes every endpoint with examples of success and errors", async () => {
    const document = (await t.app.inject({ url: "/openapi.json" })).json();
    expect(Object.keys(document.paths).sort()).toEqual(
      [
        "/api/v1/exchanges",
        "/api/v1/markets",
        "/api/v1/obligations",
        "/api/v1/projects",
        "/api/v1/report",
        "/api/v1/report-card",
        "/api/v1/reports",
        "/api/v1/scorecards",
        "/api/v1/scorecards/daily",
        "/api/v1/submissions",
        "/api/v1/submissions/{id}",
        "/api/v2/report",
        "/api/v1/webhooks",
        "/api/v1/webhooks/{id}",
        "/api/v1/webhooks/{id}/test",
        "/api/v1/webhooks/{id}/deliveries",
        "/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry",
        "/api/v1/webhooks/{id}/rotate-secret",
        "/healthz",
        "/readyz",
      ].sort(),
    );
    const v2 = document.paths["/api/v2/report"].post;
    expect(v2.requestBody.content["application/json"].example.data).toHaveLength(1);
    for (const status of ["201", "400", "401", "413", "415", "429", "500", "503"]) {
      // The 401 every authenticated operation shares is one component response.
      const response = v2.responses[status].$ref
        ? document.components.responses[v2.responses[status].$ref.split("/").pop()]
        : v2.responses[status];
      expect(response.content["application/json"].example, status).toBeDefined();
    }
    expect(v2.operationId).toBe("submitReportsV2");
    const record = v2.requestBody.content["application/json"].schema.properties.data.items;
    expect(record.required).toContain("topOfBookPercentage");
    expect(record.properties.bidAskSpread.maximum).toBe(100);
    expect(
      document.paths["/api/v1/reports"].get.parameters.map((p: { name: string }) => p.name),
    ).toEqual([
      "baseCoinId",
      "exchangeId",
      "organizationId",
      "dateGte",
      "dateLte",
      "page",
      "pageSize",
      "include",
    ]);
  });
});

describe("the reference page", () => {
  it.skipIf(!existsSync(CHROMIUM))(
    "renders in headless Chromium from local files only",
    async () => {
      await t.app.listen({ host: "127.0.0.1", port: 0 });
      const address = t.app.server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
        ],
      });
      const outside: string[] = [];
      try {
        const page = await browser.newPage();
        await page.route("**/*", (route) => {
          const url = new URL(route.request().url());
          if (url.hostname === "127.0.0.1") return route.continue();
          outside.push(url.href);
          return route.abort();
        });
        await page.goto(`http://127.0.0.1:${port}/docs`);
        await page.waitForSelector(".swagger-ui .info .title", { timeout: 30_000 });
        expect(await page.textContent(".swagger-ui .info .title")).toContain("trading-reports");
        await page
          .getByText("/api/v2/report", { exact: true })
          .first()
          .waitFor({ timeout: 30_000 });
        expect(await page.locator(".opblock").count()).toBeGreaterThanOrEqual(7);
      } finally {
        await browser.close();
      }
      expect(outside).toEqual([]);
    },
  );
});

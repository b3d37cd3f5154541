import swagger from "@fastify/swagger";
import Fastify from "fastify";
import { serializerCompiler } from "fastify-type-provider-zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openApiOptions } from "../src/http/openapi.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

type Operation = { responses?: Record<string, { description?: string; content?: unknown }> };
type Document = { paths: Record<string, Record<string, Operation>> };

/**
 * The operations of a generated document whose success response is not documented: no 2xx,
 * or one without content, or the placeholder @fastify/swagger gives a route without schema.
 */
function undocumented(document: Document): string[] {
  const missing: string[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const responses = Object.entries(operation.responses ?? {});
      const success = responses.filter(([status]) => status.startsWith("2"));
      const documented =
        success.length > 0 &&
        responses.every(([, r]) => r.description !== "Default Response") &&
        // A 204 has no content by definition (HTTP); every other success documents its body.
        success.every(([status, r]) => r.content !== undefined || status === "204");
      if (!documented) missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return missing;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe("the OpenAPI document generated from the routes", () => {
  it("documents a success response (with its schema) for every route", async () => {
    const document = (await t.app.inject({ url: "/openapi.json" })).json() as Document;
    expect(Object.keys(document.paths).length).toBeGreaterThanOrEqual(7);
    expect(undocumented(document)).toEqual([]);
  });

  it("would name a route that declares no response", async () => {
    const app = Fastify({ logger: false });
    app.setSerializerCompiler(serializerCompiler);
    await app.register(
      swagger,
      openApiOptions({
        publicUrl: () => "http://127.0.0.1:8080",
        maxProblemsPerResponse: 100,
        rateLimitPerMinute: 1200,
      }),
    );
    app.get(
      "/documented",
      { schema: { response: { 200: z.object({ ok: z.boolean() }).meta({ description: "OK" }) } } },
      () => ({
        ok: true,
      }),
    );
    app.get("/forgotten", () => ({ ok: true }));
    await app.ready();
    expect(undocumented(app.swagger() as unknown as Document)).toEqual(["GET /forgotten"]);
    await app.close();
  });

  it("describes units, percentages, bands, every eligibility reason and query parameter", async () => {
    const document = (await t.app.inject({ url: "/openapi.json" })).json();
    const list = document.paths["/api/v1/reports"].get;
    for (const parameter of list.parameters) expect(parameter.description).toBeTruthy();
    const items = list.responses["200"].content["application/json"].schema.properties.items;
    expect(items.items.$ref).toBe("#/components/schemas/ListedReport");
    const item = document.components.schemas.ListedReport.properties;
    expect(item.bidDepth50.description).toMatch(/USD/);
    expect(item.bidDepth50.description).toMatch(/50 bps/);
    expect(item.bidAskSpread.description).toMatch(/0\.5 means 0\.5 %/);
    expect(item.topOfBookPercentage.description).toMatch(/0\.5 means 0\.5 %/);
    for (const reason of [
      "exchange_market_data_missing",
      "base_not_traded",
      "pair_not_found",
      "before_collection_start",
    ]) {
      expect(item.eligibilityReason.description).toContain(`${reason}: `);
    }
    const record =
      document.paths["/api/v2/report"].post.requestBody.content["application/json"].schema
        .properties.data.items.properties;
    for (const [field, schema] of Object.entries(record)) {
      expect((schema as { description?: string }).description, field).toBeTruthy();
    }
  });
});

describe("query validation declared on the route", () => {
  it("answers every bad parameter in the specified 400 shape, path = parameter name", async () => {
    const response = await t.request({
      url: "/api/v1/reports?page=0&pageSize=501&dateGte=2026-02-30&baseCoinId=",
      key: KEYS.acme,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: [
        { path: "baseCoinId", message: "String must contain at least 1 character(s)" },
        { path: "dateGte", message: "Invalid date, expected YYYY-MM-DD" },
        { path: "page", message: "Expected a positive integer" },
        { path: "pageSize", message: "Expected an integer from 1 to 500" },
      ],
    });
  });
});

describe("the document's server", () => {
  it("is PUBLIC_URL when set, else the address the service listens on", async () => {
    const configured = await startTestApp({ env: { PUBLIC_URL: "https://reports.example.org/" } });
    try {
      const document = (await configured.app.inject({ url: "/openapi.json" })).json();
      expect(document.servers.map((s: { url: string }) => s.url)).toEqual([
        "https://reports.example.org",
      ]);
    } finally {
      await configured.close();
    }
    const listening = await startTestApp();
    try {
      await listening.app.listen({ host: "127.0.0.1", port: 0 });
      const address = listening.app.server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const document = (await listening.app.inject({ url: "/openapi.json" })).json();
      expect(document.servers[0].url).toBe(`http://127.0.0.1:${port}`);
    } finally {
      await listening.close();
    }
  });
});

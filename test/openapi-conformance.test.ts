import swagger from "@fastify/swagger";
import Fastify from "fastify";
import { serializerCompiler } from "fastify-type-provider-zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openApiOptions } from "../src/http/openapi.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { type Answer, Conformance, checkAnswersOf } from "./helpers/conformance.js";
import { KEYS } from "./helpers/fixture.js";

let t: TestApp;
let conformance: Conformance;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.ready();
  conformance = new Conformance(t.app.swagger() as never);
});
afterAll(async () => t?.close());

const exchanges = (change: Partial<Answer>): Answer => ({
  method: "GET",
  url: "/api/v1/exchanges",
  statusCode: 200,
  headers: {
    "content-type": "application/json; charset=utf-8",
    "x-request-id": "abc",
    "x-ratelimit-limit": "1200",
  },
  body: JSON.stringify({ items: [] }),
  ...change,
});

describe("every answer of the tests is checked against the OpenAPI document", () => {
  it("passes the answers of the service (any test's answers are checked the same way)", async () => {
    const response = await t.request({ url: "/api/v1/exchanges", key: KEYS.acme });
    expect(response.statusCode).toBe(200);
    expect(conformance.check(exchanges({}))).toEqual([]);
  });

  it("fails an undocumented status", () => {
    expect(conformance.check(exchanges({ statusCode: 404 }))).toEqual([
      "GET /api/v1/exchanges -> 404: status 404 is not documented",
    ]);
  });

  it("fails an undocumented header, and a documented one with a bad value", () => {
    const headers = { ...exchanges({}).headers, "x-powered-by": "x", "x-ratelimit-reset": "soon" };
    const problems = conformance.check(exchanges({ headers }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/header x-powered-by is not documented/);
    expect(problems[1]).toMatch(/header x-ratelimit-reset: soon/);
  });

  it("fails an undocumented field, a missing one and an undocumented content type", () => {
    const item = { id: "x", name: "X", spot: true, derivatives: false, marketData: true };
    expect(
      conformance.check(
        exchanges({ body: JSON.stringify({ items: [{ ...item, group: "x", extra: 1 }] }) }),
      ),
    ).toEqual([expect.stringMatching(/must NOT have additional properties/)]);
    expect(conformance.check(exchanges({ body: JSON.stringify({ items: [item] }) }))).toEqual([
      expect.stringMatching(/must have required property 'group'/),
    ]);
    expect(conformance.check(exchanges({ headers: { "content-type": "text/html" } }))).toEqual([
      expect.stringMatching(/content type text\/html is not documented/),
    ]);
  });

  it("fails a CSV whose header row is not the documented columns", () => {
    const csv = {
      url: "/api/v1/reports",
      headers: { "content-type": "text/csv; charset=utf-8" },
      body: "date,exchangeId\r\n",
    };
    expect(conformance.check(exchanges(csv))).toEqual([
      expect.stringMatching(/CSV header row date,exchangeId is not date,exchangeId,exchangeName,/),
    ]);
  });
});

describe("the hook of the test apps", () => {
  it("records an answer its route does not document", async () => {
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
    const ok = z.object({ ok: z.boolean() }).meta({ description: "OK", examples: [{ ok: true }] });
    // An answer the route does not document, on purpose (hence the cast past its typed reply).
    app.get("/teapot", { schema: { security: [], response: { 200: ok } } }, (_request, reply) =>
      reply.status(418 as 200).send({ ok: false }),
    );
    const checks = checkAnswersOf(app);
    expect((await app.inject({ url: "/teapot" })).statusCode).toBe(418);
    expect(checks.violations()).toEqual(["GET /teapot -> 418: status 418 is not documented"]);
    await app.close();
  });
});

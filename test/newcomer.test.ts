import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

/** Issue 18: what a newcomer meets first. */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe("GET /", () => {
  it("answers a JSON index of where things are, without a key", async () => {
    const response = await t.request({ url: "/" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      service: "trading-reports",
      docs: "/docs",
      openapi: "/openapi.json",
      health: "/healthz",
      ready: "/readyz",
      reports: "/api/v1/reports",
    });
    // Every link it gives leads somewhere (the reports one asks for a key).
    for (const path of ["/docs", "/openapi.json", "/healthz", "/readyz"]) {
      const linked = await t.request({ url: path });
      expect(linked.statusCode, path).toBeLessThan(400);
    }
    expect((await t.request({ url: "/api/v1/reports" })).statusCode).toBe(401);
  });

  it("sends a browser to the interactive reference", async () => {
    const response = await t.request({
      url: "/",
      headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
    });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe("/docs");
  });
});

describe("HOST and PORT", () => {
  it("default to 127.0.0.1:8080 and are read from the environment", () => {
    expect(loadConfig({}).listen).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(loadConfig({ HOST: "0.0.0.0", PORT: "9090" }).listen).toEqual({
      host: "0.0.0.0",
      port: 9090,
    });
    expect(loadConfig({ HOST: "", PORT: "" }).listen).toEqual({ host: "127.0.0.1", port: 8080 });
  });

  it("refuse a port that is not one", () => {
    for (const port of ["x", "-1", "65536", "80.5"]) {
      expect(() => loadConfig({ PORT: port }), port).toThrow(ConfigError);
    }
    expect(() => loadConfig({ PORT: "x" })).toThrow(/PORT/);
  });
});

import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { KEYS } from "./helpers/fixture.js";
import { METRICS_TOKEN, startMetricsSystem } from "./helpers/metrics.js";

/** Builds the system with `env`, runs `check` on its app and metrics listener, closes both. */
async function withSystem(
  env: Record<string, string>,
  check: (app: FastifyInstance, metricsUrl: string | undefined) => Promise<void>,
): Promise<void> {
  const { system } = await startMetricsSystem(env);
  const app = await system.http(false);
  const server = await system.listenForMetrics();
  try {
    const address = server?.address() as AddressInfo | undefined;
    await check(app, address && `http://127.0.0.1:${address.port}`);
  } finally {
    server?.close();
    await app.close();
    await system.close();
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("/metrics is never public by default", () => {
  it("neither METRICS_PORT nor METRICS_TOKEN: 404 on the API's port and no listener", async () => {
    await withSystem({}, async (app, metricsUrl) => {
      expect(metricsUrl).toBeUndefined();
      expect((await app.inject({ url: "/metrics" })).statusCode).toBe(404);
      const withKey = await app.inject({ url: "/metrics", headers: { authorization: KEYS.acme } });
      expect(withKey.statusCode).toBe(404);
    });
  });

  it("METRICS_TOKEN: the API's port answers 401 without it or with a wrong one, 200 with it", async () => {
    await withSystem({ METRICS_TOKEN }, async (app, metricsUrl) => {
      expect(metricsUrl).toBeUndefined();
      const none = await app.inject({ url: "/metrics" });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toEqual({ statusCode: 401, message: "Missing or wrong metrics token" });
      expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
      const wrong = await app.inject({ url: "/metrics", headers: bearer(`${METRICS_TOKEN}x`) });
      expect(wrong.statusCode).toBe(401);
      // An API key is not the metrics token.
      const apiKey = await app.inject({ url: "/metrics", headers: bearer(KEYS.acme) });
      expect(apiKey.statusCode).toBe(401);
      const right = await app.inject({ url: "/metrics", headers: bearer(METRICS_TOKEN) });
      expect(right.statusCode).toBe(200);
      expect(right.body).toContain("trading_reports_records_total");
    });
  });

  it("METRICS_PORT: its own loopback listener answers; the API's port does not", async () => {
    await withSystem({ METRICS_PORT: "0" }, async (app, metricsUrl) => {
      expect(metricsUrl).toBeDefined();
      expect((await app.inject({ url: "/metrics" })).statusCode).toBe(404);
      const response = await fetch(`${metricsUrl}/metrics`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain("trading_reports_http_request_duration_seconds");
      expect((await fetch(`${metricsUrl}/api/v1/reports`)).status).toBe(404);
      expect((await fetch(`${metricsUrl}/metrics`, { method: "POST" })).status).toBe(405);
    });
  });

  it("METRICS_PORT with METRICS_TOKEN: the listener asks for the token too", async () => {
    await withSystem({ METRICS_PORT: "0", METRICS_TOKEN }, async (_app, metricsUrl) => {
      expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(401);
      const wrong = await fetch(`${metricsUrl}/metrics`, {
        headers: bearer("not-the-token-at-all"),
      });
      expect(wrong.status).toBe(401);
      const right = await fetch(`${metricsUrl}/metrics`, { headers: bearer(METRICS_TOKEN) });
      expect(right.status).toBe(200);
    });
  });

  it("refuses a METRICS_TOKEN shorter than 16 characters at start-up", async () => {
    expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN/);
  });
});

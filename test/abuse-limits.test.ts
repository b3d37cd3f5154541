import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { buildApp } from "../src/http/app.js";
import type { Services } from "../src/services/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Records } from "./helpers/fixture.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.app.server.address();
  return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
}

describe("abuse limits", () => {
  it("sheds load past the in-flight limit with 503 and Retry-After, then serves again", async () => {
    t = await startTestApp();
    // A service that answers only when told to, so that requests stay in flight.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const services: Services = {
      ...t.services,
      listExchanges: async () => {
        await held;
        return { items: [] };
      },
    };
    const app = await buildApp({
      services,
      http: loadConfig({ MAX_IN_FLIGHT_REQUESTS: "2" }).http,
      logger: false,
    });
    try {
      const get = () =>
        app.inject({
          method: "GET",
          url: "/api/v1/exchanges",
          headers: { authorization: KEYS.acme },
        });
      const first = [get(), get()];
      await new Promise((resolve) => setTimeout(resolve, 200));
      const shed = await get();
      expect(shed.statusCode).toBe(503);
      expect(shed.headers["retry-after"]).toBe("1");
      expect(shed.json()).toEqual({
        statusCode: 503,
        error: "Service Unavailable",
        message: "Server overloaded; retry shortly",
      });
      release();
      expect((await Promise.all(first)).map((r) => r.statusCode)).toEqual([200, 200]);
      // Every admitted request gave its slot back.
      expect((await get()).statusCode).toBe(200);
      expect((await get()).statusCode).toBe(200);
    } finally {
      release();
      await app.close();
    }
  });

  it("answers 429 with Retry-After per API key, without touching other keys' budgets", async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: "3" } });
    const get = (key: string) => t?.request({ method: "GET", url: "/api/v1/exchanges", key });
    for (let i = 0; i < 3; i++) expect((await get(KEYS.acme))?.statusCode).toBe(200);
    const limited = await get(`Bearer ${KEYS.acme}`);
    expect(limited?.statusCode).toBe(429);
    expect(limited?.headers["retry-after"]).toBeDefined();
    expect(limited?.json()).toMatchObject({ statusCode: 429, error: "Too Many Requests" });
    expect((await get(KEYS.globex))?.statusCode).toBe(200);
  });

  it("refuses a body over the limit with 413 before parsing it", async () => {
    t = await startTestApp({ env: { BODY_LIMIT_BYTES: "1024" } });
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: v2Records(5) },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ statusCode: 413, error: "Payload Too Large" });
  });

  it("drops a client that sends its headers too slowly", async () => {
    t = await startTestApp({ env: { REQUEST_TIMEOUT_MS: "500" } });
    const origin = new URL(await listen(t));
    const started = Date.now();
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(Number(origin.port), origin.hostname, () => {
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n"); // never finishes the headers
      });
      let received = "";
      socket.on("data", (d) => {
        received += d.toString();
      });
      socket.on("close", () => resolve(received));
      setTimeout(() => {
        socket.destroy();
        resolve("still open");
      }, 10_000).unref();
    });
    expect(outcome).not.toBe("still open");
    expect(outcome === "" || outcome.startsWith("HTTP/1.1 408")).toBe(true);
    if (outcome !== "") {
      expect(outcome).toContain("X-Content-Type-Options: nosniff");
      expect(outcome).toContain('"message":"Request not received whole within 500 ms"');
    }
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

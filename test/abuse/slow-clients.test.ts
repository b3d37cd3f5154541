import { connect, type Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import type { ReportCsvItem } from "../../src/schemas/report.js";
import type { Services } from "../../src/services/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { KEYS } from "../helpers/fixture.js";

let t: TestApp | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await t?.close();
  t = undefined;
});

async function serve(
  services: Services,
  env: Record<string, string>,
): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildApp({ services, http: loadConfig(env).http, logger: false });
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => app.close());
  const address = app.server.address();
  return { app, port: typeof address === "object" && address !== null ? address.port : 0 };
}

/** A raw connection from `localAddress` that sends `text` and then nothing (and never reads). */
function rawClient(port: number, text: string, localAddress = "127.0.0.2"): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress }, () => {
      socket.write(text);
      resolve(socket);
    });
    socket.on("error", () => {});
    socket.once("error", reject);
    cleanups.push(() => {
      socket.destroy();
    });
  });
}

const slowUpload = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;

const csvRequest = (key: string) =>
  `GET /api/v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: ${key}\r\nAccept: text/csv\r\n\r\n`;

function get(port: number, path: string, key?: string) {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    headers: key === undefined ? {} : { authorization: key },
    signal: AbortSignal.timeout(5_000),
  });
}

/** An export that never ends: chunks of wide rows, for as long as the client takes them. */
function endlessExport(): Services["exportReports"] {
  const row = { date: "2024-01-01", exchangeId: "x".repeat(2_000) } as unknown as ReportCsvItem;
  return async function* () {
    for (;;) yield Array.from({ length: 500 }, () => row);
  };
}

describe("slow clients", () => {
  it("a request takes an in-flight slot only once its body has arrived", async () => {
    t = await startTestApp();
    const { port } = await serve(t.services, { MAX_IN_FLIGHT_REQUESTS: "1" });
    for (const path of ["/x", "/healthz", "/api/v2/report"])
      await rawClient(port, slowUpload(path));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await get(port, "/api/v1/exchanges", KEYS.acme)).status).toBe(200);
    expect((await get(port, "/api/v1/exchanges", KEYS.globex)).status).toBe(200);
  });

  it("keeps a request's slot until its handler is done, even when its client hangs up", async () => {
    t = await startTestApp();
    let running = 0;
    let mostAtOnce = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(() => release());
    const services: Services = {
      ...t.services,
      listExchanges: async () => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        await held;
        running--;
        return { items: [] };
      },
    };
    const { port } = await serve(services, { MAX_IN_FLIGHT_REQUESTS: "2" });
    const request = `GET /api/v1/exchanges HTTP/1.1\r\nHost: x\r\nAuthorization: ${KEYS.acme}\r\n\r\n`;
    for (let i = 0; i < 10; i++) {
      const socket = await rawClient(port, request);
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
    }
    // The two admitted handlers are still at work: the pool is full for everyone.
    expect(mostAtOnce).toBe(2);
    expect((await get(port, "/api/v1/exchanges", KEYS.globex)).status).toBe(503);
    // Once they are done, their slots are free again.
    release();
    await vi.waitFor(() => expect(running).toBe(0));
    const after = await get(port, "/api/v1/exchanges", KEYS.globex);
    expect(after.status).toBe(200);
    expect(mostAtOnce).toBe(2);
  });

  it("never sheds the health probes", async () => {
    t = await startTestApp();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(() => release());
    const services: Services = {
      ...t.services,
      listExchanges: async () => {
        await held;
        return { items: [] };
      },
    };
    const { port } = await serve(services, { MAX_IN_FLIGHT_REQUESTS: "1" });
    const first = get(port, "/api/v1/exchanges", KEYS.acme);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await get(port, "/api/v1/projects", KEYS.acme)).status).toBe(503);
    expect((await get(port, "/healthz")).status).toBe(200);
    expect((await get(port, "/readyz")).status).toBe(200);
    release();
    expect((await first).status).toBe(200);
  });

  it("an export its client does not read holds its key's export slot, not the shared pool, until the idle timeout", async () => {
    t = await startTestApp();
    const services: Services = { ...t.services, exportReports: endlessExport() };
    const { port } = await serve(services, {
      MAX_IN_FLIGHT_REQUESTS: "1",
      MAX_EXPORTS_PER_KEY: "1",
      IDLE_TIMEOUT_MS: "1000",
    });
    const reader = await rawClient(port, csvRequest(KEYS.acme));
    reader.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The stuck export holds no in-flight slot: everyone else is served.
    expect((await get(port, "/api/v1/exchanges", KEYS.globex)).status).toBe(200);
    expect((await get(port, "/api/v1/exchanges", KEYS.acme)).status).toBe(200);
    // A second export of the same key waits for the first one.
    const second = await fetch(`http://127.0.0.1:${port}/api/v1/reports`, {
      headers: { authorization: KEYS.acme, accept: "text/csv" },
      signal: AbortSignal.timeout(5_000),
    });
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("5");
    expect(await second.json()).toEqual({
      statusCode: 429,
      error: "Too Many Requests",
      message: "Too many concurrent exports: at most 1 per API key; retry when one has finished",
    });
    // No progress for the idle timeout: the connection is closed and the slot is free again.
    const deadline = Date.now() + 8_000;
    let status = 429;
    while (status === 429 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const controller = new AbortController();
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/reports`, {
        headers: { authorization: KEYS.acme, accept: "text/csv" },
        signal: controller.signal,
      });
      status = response.status;
      controller.abort();
    }
    expect(status, "the unread export was never timed out").toBe(200);
  }, 60_000);

  it("counts the dashboard's CSV downloads and the API's exports of a key together", async () => {
    t = await startTestApp();
    const services: Services = { ...t.services, exportReports: endlessExport() };
    const { port } = await serve(services, { MAX_EXPORTS_PER_KEY: "1", IDLE_TIMEOUT_MS: "60000" });
    const signIn = await fetch(`http://127.0.0.1:${port}/app/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ key: KEYS.acme }).toString(),
      redirect: "manual",
    });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const download = () =>
      fetch(`http://127.0.0.1:${port}/app/reports.csv`, {
        headers: { cookie },
        signal: AbortSignal.timeout(5_000),
      });
    // An API export that is never read holds the key's one slot...
    const reader = await rawClient(port, csvRequest(KEYS.acme));
    reader.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // ...so the dashboard's download is refused, with a page that says why.
    const refused = await download();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await refused.text()).toContain("Too many concurrent exports: at most 1 per API key");
    // Once the export's connection is gone, the slot is the download's, and the API waits.
    reader.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stuck = await rawClient(
      port,
      `GET /app/reports.csv HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\n\r\n`,
    );
    stuck.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const api = await fetch(`http://127.0.0.1:${port}/api/v1/reports`, {
      headers: { authorization: KEYS.acme, accept: "text/csv" },
      signal: AbortSignal.timeout(5_000),
    });
    expect(api.status).toBe(429);
  }, 60_000);

  it("does not count a request's own work against the idle timeout", async () => {
    t = await startTestApp();
    const services: Services = {
      ...t.services,
      listExchanges: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return { items: [] };
      },
    };
    const { port } = await serve(services, { IDLE_TIMEOUT_MS: "300" });
    const slow = await get(port, "/api/v1/exchanges", KEYS.acme);
    expect(slow.status).toBe(200);
    expect(await slow.json()).toEqual({ items: [] });
  });

  it("closes connections past the limit per client address, and only those", async () => {
    t = await startTestApp();
    const { port } = await serve(t.services, { MAX_CONNECTIONS_PER_ADDRESS: "3" });
    const held = await Promise.all([1, 2, 3].map(() => rawClient(port, slowUpload("/x"))));
    const extra = await rawClient(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const closed = await new Promise<boolean>((resolve) => {
      extra.once("close", () => resolve(true));
      setTimeout(() => resolve(false), 3_000);
    });
    expect(closed).toBe(true);
    expect((await get(port, "/healthz")).status).toBe(200);
    // When one closes, the address may connect again.
    held[0]?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await rawClient(
      port,
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    const answer = await new Promise<string>((resolve) => {
      let text = "";
      again.on("data", (d) => {
        text += d.toString();
      });
      again.once("close", () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
  });
});

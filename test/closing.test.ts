import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { buildApp } from "../src/http/app.js";
import type { Services } from "../src/services/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";
import { listenOnLoopback } from "./helpers/raw-http.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A gate: `entered` resolves when the work reaches it, `open()` lets it through. */
function gate() {
  let reached = () => {};
  let open = () => {};
  const entered = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { entered, opened, reached: () => reached(), open: () => open() };
}

describe("a request reaching a closing server", () => {
  it("gets the API's 503 with Retry-After and Connection: close, not Fastify's own", async () => {
    t = await startTestApp();
    const held = gate();
    const services: Services = {
      ...t.services,
      ready: async () => {
        held.reached();
        await held.opened;
        return t?.services.ready();
      },
    };
    const app = await buildApp({ services, http: loadConfig({}).http, logger: false });
    let secondAnswered = () => {};
    const second = new Promise<void>((resolve) => {
      secondAnswered = resolve;
    });
    app.addHook("onSend", async (request, _reply, payload) => {
      if (request.url === "/api/v1/exchanges") secondAnswered();
      return payload;
    });
    const port = await listenOnLoopback(app);
    // A keep-alive connection whose first request is in flight when close() begins; the
    // second comes on it after that.
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    const ended = new Promise((resolve) => socket.on("close", resolve));
    socket.write("GET /readyz HTTP/1.1\r\nHost: test\r\n\r\n");
    await held.entered;
    const closed = app.close();
    socket.write(
      `GET /api/v1/exchanges HTTP/1.1\r\nHost: test\r\nAuthorization: ${KEYS.acme}\r\n\r\n`,
    );
    await second; // its answer is made (and sent after the first's)
    held.open();
    await Promise.all([ended, closed]);
    const text = Buffer.concat(chunks).toString("utf8");
    const secondAt = text.indexOf("HTTP/1.1 ", 1);
    expect(text.slice(0, 15)).toBe("HTTP/1.1 200 OK");
    const [head = "", body = ""] = text.slice(secondAt).split("\r\n\r\n");
    const [status, ...lines] = head.split("\r\n");
    const headers = Object.fromEntries(
      lines.map((line) => [
        line.slice(0, line.indexOf(":")).toLowerCase(),
        line.slice(line.indexOf(":") + 1).trim(),
      ]),
    );
    expect(status).toBe("HTTP/1.1 503 Service Unavailable");
    expect(headers["retry-after"]).toBe("5");
    expect(headers.connection).toBe("close");
    expect(headers["x-request-id"]).toBeTruthy();
    expect(JSON.parse(body)).toEqual({
      statusCode: 503,
      error: "Service Unavailable",
      message: "Service temporarily unavailable; retry later",
    });
  });
});

import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { protocolErrorBody } from "../src/http/protocol-errors.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { listenOnLoopback, sendRaw } from "./helpers/raw-http.js";

/** Requests Node's HTTP parser refuses before any route: written byte for byte on a socket. */

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await startTestApp();
  port = await listenOnLoopback(t.app);
});
afterAll(async () => t?.close());

const send = (raw: string) => sendRaw(port, raw);

const post = (headers: string, body: string) =>
  `POST /api/v2/report HTTP/1.1\r\nHost: x\r\nAuthorization: ${KEYS.acme}\r\n` +
  `Content-Type: application/json\r\n${headers}\r\n${body}`;

describe("requests the HTTP parser refuses", () => {
  it.each([
    [
      "a Content-Length beside a Transfer-Encoding",
      post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"),
      /^Malformed HTTP request: .*Transfer-Encoding/,
    ],
    [
      "a chunk size that is not hexadecimal",
      post("Transfer-Encoding: chunked\r\n", "zz\r\nabc\r\n0\r\n\r\n"),
      /^Malformed HTTP request: .*chunk size/,
    ],
    [
      "a negative Content-Length",
      post("Content-Length: -1\r\n", "{}"),
      /^Malformed HTTP request: .*Content-Length/,
    ],
    ["a request line that is not HTTP", "GARBAGE\r\n\r\n", /^Malformed HTTP request: ./],
  ])("answers %s with a 400 in the array form, and closes", async (_case, raw, message) => {
    const answer = await send(raw);
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.body);
    expect(body).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: [{ message: expect.stringMatching(message) }],
    });
    expect(answer.headers).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(answer.body)),
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      connection: "close",
      "x-request-id": expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    // Nothing of it was stored, and the service answers the next connection.
    const listing = await t.request({ url: "/api/v1/reports", key: KEYS.acme });
    expect(listing.json().totalCount).toBe(0);
  });

  it("answers headers over Node's 16 KiB with a 431 in the service's shape", async () => {
    const answer = await send(
      `GET /api/v1/reports HTTP/1.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toEqual({
      statusCode: 431,
      error: "Request Header Fields Too Large",
      message: "Request line and headers are larger than 16 KiB",
    });
    expect(answer.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("words a request timeout with the configured limit", () => {
    const timeout = Object.assign(new Error("timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" });
    expect(protocolErrorBody(timeout, 30_000)).toEqual({
      statusCode: 408,
      error: "Request Timeout",
      message: "Request not received whole within 30000 ms",
    });
    const parser = Object.assign(new Error("Parse Error"), { code: "HPE_INVALID_METHOD" });
    expect(protocolErrorBody(parser, 30_000)).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: [{ message: "Malformed HTTP request" }],
    });
  });

  it("answers a request read whole as any other when bytes follow its Connection: close, never with a 400", async () => {
    const record = JSON.stringify({ data: [v2Record({ date: "2025-03-01", bidDepthTob: 4242 })] });
    const answer = await send(
      post(`Content-Length: ${Buffer.byteLength(record)}\r\nConnection: close\r\n`, record) +
        "GARBAGE",
    );
    // Stored, and told so: the answer is the request's own 201.
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual({ createdCount: 1, updatedCount: 0 });
    expect(answer.headers["x-submission-id"]).toBeDefined();
    const listing = await t.request({ url: "/api/v1/reports", key: KEYS.acme });
    expect(listing.json().items.map((r: { bidDepthTob: number }) => r.bidDepthTob)).toEqual([4242]);
  });

  it("answers every request read whole before the refused bytes, pipelined ones too", async () => {
    const request = (date: string, depth: number) => {
      const body = JSON.stringify({ data: [v2Record({ date, bidDepthTob: depth })] });
      return post(`Content-Length: ${Buffer.byteLength(body)}\r\n`, body);
    };
    const raw = `${request("2025-03-02", 5151)}${request("2025-03-03", 6161)}GARBAGE\r\n\r\n`;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(raw));
      const chunks: Buffer[] = [];
      socket.on("data", (chunk) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    expect(text.match(/HTTP\/1\.1 \d+/g)).toEqual(["HTTP/1.1 201", "HTTP/1.1 201"]);
    const listing = await t.request({ url: "/api/v1/reports?dateGte=2025-03-02", key: KEYS.acme });
    const depths = listing.json().items.map((r: { bidDepthTob: number }) => r.bidDepthTob);
    expect(depths.sort()).toEqual([5151, 6161]);
  });
});

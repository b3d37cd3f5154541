import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJson } from "../src/cli/submission/batch-json.js";
import { runSubmit } from "../src/cli/submit.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";

// A file's number too large for a double (1e400) was read as Infinity and sent as null by
// `trading-reports submit`: a quoteCoinId of 1e400 beside a symbol was stored as that symbol's
// record, which the service refuses when sent the file's own text.
let t: TestApp;
let dir: string;
let url: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const address = t.app.server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  dir = mkdtempSync(join(tmpdir(), "submit-non-finite-"));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function submitFile(name: string, content: string, dryRun = false) {
  const file = join(dir, name);
  writeFileSync(file, content);
  const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, out: "" };
  io.stdout.on("data", (chunk) => {
    io.out += chunk;
  });
  io.stderr.on("data", (chunk) => {
    io.out += chunk;
  });
  const code = await runSubmit(file, { url, key: KEYS.acme, dryRun }, io);
  return { code, out: io.out };
}

describe("submit: numbers too large for a double", () => {
  it("sends a JSON file's 1e400 as a number: the service refuses a quoteCoinId of it", async () => {
    const { quoteCoinId: _, ...record } = v2Record({
      exchangeId: "kraken",
      quoteCoinSymbol: "USD",
    });
    const text = `[${JSON.stringify(record).replace(/^\{/, '{"quoteCoinId": 1e400, ')}]`;
    const { code, out } = await submitFile("quote.json", text);
    expect(code).toBe(1);
    expect(out).toContain("quoteCoinId: Expected string, received number");
    const listed = await t.request({ url: "/api/v1/reports", key: KEYS.acme });
    expect(listed.json().totalCount).toBe(0);
  });

  it("has a metric of 1e309 answered as the service answers it, from JSON and from CSV", async () => {
    const json = `[${JSON.stringify(v2Record()).replace('"bidDepth50":4000', '"bidDepth50":1e309')}]`;
    expect((await submitFile("metric.json", json, true)).out).toContain(
      "bidDepth50: Number must be finite",
    );
    const record = v2Record({ bidDepth50: 4000 });
    const columns = Object.keys(record);
    const cells = columns.map((c) => (c === "bidDepth50" ? "1e309" : String(record[c as never])));
    const csv = `${columns.join(",")}\n${cells.join(",")}\n`;
    expect((await submitFile("metric.csv", csv, true)).out).toContain(
      "bidDepth50: Number must be finite",
    );
  });
});

describe("batchJson", () => {
  it("is JSON.stringify for finite numbers, and writes ±Infinity as ±1e999", () => {
    const body = { data: [{ a: 1.5, b: "x", c: null }] };
    expect(batchJson(body)).toBe(JSON.stringify(body));
    expect(batchJson({ data: [{ a: Number.POSITIVE_INFINITY, b: -Infinity, c: "1e999" }] })).toBe(
      '{"data":[{"a":1e999,"b":-1e999,"c":"1e999"}]}',
    );
  });
});

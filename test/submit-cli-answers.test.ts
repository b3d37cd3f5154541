import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJson } from "../src/cli/submission/batch-json.js";
import { runSubmit } from "../src/cli/submit.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record, v2Records } from "./helpers/fixture.js";

// `trading-reports submit` against the service itself: what it sends, and how it reads the
// answers.
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

async function submitFile(name: string, content: string, dryRun = false, json = false) {
  const file = join(dir, name);
  writeFileSync(file, content);
  const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, out: "" };
  io.stdout.on("data", (chunk) => {
    io.out += chunk;
  });
  const code = await runSubmit(file, { url, key: KEYS.acme, dryRun, json }, io);
  return { code, out: io.out };
}

// A file's number too large for a double (1e400) was read as Infinity and sent as null: a
// quoteCoinId of 1e400 beside a symbol was stored as that symbol's record, which the service
// refuses when sent the file's own text.
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

// Past MAX_PROBLEMS_PER_RESPONSE (100) a 400 ends with "… and N more problems": the batch was
// counted as failed on top of its listed rejections (100 + 300 records of a 300-record file).
describe("submit: a batch with more problems than the service lists", () => {
  it("is a rejected batch whose records add up, with the problems not listed counted", async () => {
    const records = v2Records(300).map((r, i) => (i >= 150 ? { ...r, bidAskSpread: 101 } : r));
    const text = `[\n${records.map((r) => JSON.stringify(r)).join(",\n")}\n]\n`;
    const { code, out } = await submitFile("many.json", text, false, true);
    expect(code).toBe(1);
    expect(JSON.parse(out)).toMatchObject({
      rejectedRecords: 100,
      rejectedBatches: 1,
      notStored: 200,
      unlistedProblems: 50,
      failedBatches: [],
    });
    const human = await submitFile("many-again.json", text, true);
    expect(human.out.split("\n")[0]).toBe(
      "dry run, nothing stored: created 0, updated 0, rejected 100 (records of rejected batches not stored: 200), 50 more problems not listed by the service (records not named; fix the ones listed and send again)",
    );
    const listed = await t.request({ url: "/api/v1/reports", key: KEYS.acme });
    expect(listed.json().totalCount).toBe(0);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Command, CommanderError } from "commander";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  parseCsv,
  parseJson,
  RecordFileError,
  readRecords,
} from "../src/cli/submission/read-records.js";
import { submitBatches } from "../src/cli/submission/send-batches.js";
import { registerSubmitCommand } from "../src/cli/submit.js";
import { interruptionNote } from "../src/cli/submit-summary.js";
import { METRICS, PERCENTAGE_METRICS } from "../src/domain/report.js";

const FIXTURES = new URL("./fixtures/submit/", import.meta.url).pathname;
const fixture = (name: string) => join(FIXTURES, name);
const KEY = "mm-test-key";

// ---------------------------------------------------------------------------------------------
// A fake reporting service imitating the contract: 201 counts, 400 problems, 401, scripted 5xx.

type Received = { path: string; headers: IncomingHttpHeaders; data: Record<string, unknown>[] };
type Scripted = { status: number; body: unknown; headers?: Record<string, string> };
/** `drop`: handle the request as usual (store it), then close the connection unanswered. */
type Scripting = Scripted | "drop";

const V2_REQUIRED = ["date", "exchangeId", "baseCoinId", ...METRICS, "instrumentType", "type"];
const V1_REQUIRED = ["date", "exchangeId", "baseCoinId"];

function validate(version: string, data: Record<string, unknown>[]) {
  const problems: { path: string; message: string }[] = [];
  const keys = new Map<string, number>();
  data.forEach((record, index) => {
    const required = version === "v2" ? V2_REQUIRED : V1_REQUIRED;
    for (const field of required) {
      if (record[field] === undefined)
        problems.push({ path: `data.${index}.${field}`, message: "Required" });
    }
    for (const field of METRICS) {
      const value = record[field];
      if (value === undefined) continue;
      const path = `data.${index}.${field}`;
      if (typeof value !== "number") {
        const type = value === null ? "null" : typeof value;
        problems.push({ path, message: `Expected number, received ${type}` });
      } else if (value < 0) {
        problems.push({ path, message: "Number must be greater than or equal to 0" });
      } else if (PERCENTAGE_METRICS.has(field) && value > 100) {
        problems.push({ path, message: "Number must be less than or equal to 100" });
      }
    }
    const key = `${record.date}|${record.exchangeId}|${record.quoteCoinId ?? record.quoteCoinSymbol}`;
    const earlier = keys.get(key);
    if (earlier !== undefined) {
      problems.push({
        path: `data.${index}`,
        message: `Duplicate record key (same as data.${earlier})`,
      });
    } else keys.set(key, index);
  });
  return problems;
}

class FakeService {
  readonly received: Received[] = [];
  readonly stored = new Set<string>();
  readonly script: Scripting[] = [];
  private server: Server | undefined;
  url = "";

  async start() {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      request.on("end", () => {
        const drop = this.script[0] === "drop" && this.script.shift();
        const reply = this.handle(request.url ?? "", request.headers, body, !drop);
        if (drop) return void request.socket.destroy();
        response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        response.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((done) => this.server?.listen(0, "127.0.0.1", done));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  async stop() {
    await new Promise((done) => this.server?.close(done));
  }

  reset() {
    this.received.length = 0;
    this.stored.clear();
    this.script.length = 0;
  }

  private handle(path: string, headers: IncomingHttpHeaders, body: string, scripts = true) {
    const parsed = JSON.parse(body) as { data: Record<string, unknown>[] };
    this.received.push({ path, headers, data: parsed.data });
    const scripted = scripts ? this.script[0] : undefined;
    if (scripted !== undefined && scripted !== "drop") return this.script.shift() as Scripted;
    if (headers.authorization !== KEY) {
      return { status: 401, body: { message: "Invalid API key", statusCode: 401 } };
    }
    const version = path === "/api/v1/report" ? "v1" : "v2";
    const limit = version === "v1" ? 1000 : 300;
    if (parsed.data.length > limit) {
      const message = [{ path: "data", message: `Array must contain at most ${limit} element(s)` }];
      return { status: 400, body: { message, error: "Bad Request", statusCode: 400 } };
    }
    const problems = validate(version, parsed.data);
    if (problems.length > 0) {
      return { status: 400, body: { message: problems, error: "Bad Request", statusCode: 400 } };
    }
    let createdCount = 0;
    for (const record of parsed.data) {
      const key = `${record.date}|${record.exchangeId}|${record.quoteCoinId ?? record.quoteCoinSymbol}`;
      if (!this.stored.has(key)) createdCount++;
      if (headers["x-dry-run"] !== "true") this.stored.add(key);
    }
    return {
      status: 201,
      body: { createdCount, updatedCount: parsed.data.length - createdCount },
    };
  }
}

// ---------------------------------------------------------------------------------------------

function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

const service = new FakeService();
let sleeps: number[] = [];

async function submit(
  args: string[],
  env: Record<string, string | undefined> = {},
  { tty = false } = {},
) {
  const stdout = sink();
  const stderr = sink();
  if (tty) Object.assign(stderr.stream, { isTTY: true, columns: 100 });
  const program = new Command().exitOverride();
  const exit = { code: 0 };
  registerSubmitCommand(
    program,
    {
      stdout: stdout.stream,
      stderr: stderr.stream,
      env,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
    exit,
  );
  try {
    await program.parseAsync(["node", "trading-reports", "submit", ...args]);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
  }
  const code = exit.code;
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const withServer = () => ["--url", service.url, "--key", KEY];

function writeRecords(count: number, name: string): string {
  const rows = Array.from({ length: count }, (_, index) => {
    const day = new Date(Date.UTC(2020, 0, 1) + index * 86_400_000).toISOString().slice(0, 10);
    return `${day},binance,bitcoin,tether,0.5`;
  });
  return writeTemp(
    name,
    `date,exchangeId,baseCoinId,quoteCoinId,bidAskSpread\n${rows.join("\n")}\n`,
  );
}

/** Like what a desk exports: one record per line, under "data", with a decoy nested "data". */
function writeWrappedJson(): string {
  const records = readV2Records();
  const second = { ...records[2], date: "2024-05-02", note: { data: [1, 2, "[{"] } };
  const duplicate = { ...records[0], bidDepthTob: 9 }; // same key as the first record
  const lines = [records[0], second, duplicate].map((record) => `    ${JSON.stringify(record)}`);
  const text = `{\n  "source": "desk-7",\n  "data": [\n${lines.join(",\n")}\n  ]\n}\n`;
  return writeTemp("wrapped.json", text);
}

function readV2Records(): Record<string, unknown>[] {
  return JSON.parse(readFileSync(fixture("v2-records.json"), "utf8")) as Record<string, unknown>[];
}

let temporary = "";
function writeTemp(name: string, text: string | Buffer): string {
  const file = join(mkdtempSync(join(temporary, "case-")), name);
  writeFileSync(file, text);
  return file;
}

beforeAll(async () => {
  temporary = mkdtempSync(join(tmpdir(), "submit-cli-"));
  await service.start();
});
afterAll(async () => {
  rmSync(temporary, { recursive: true, force: true });
  await service.stop();
});
beforeEach(() => {
  service.reset();
  sleeps = [];
});

describe("reading records", () => {
  it("reads CSV with numbers parsed, empty cells dropped and data rows counted from line 2", async () => {
    const source = await readRecords(fixture("v2.csv"));
    expect(source.records).toHaveLength(3);
    expect(source.records[0]).toMatchObject({ bidDepthTob: 1001, bidAskSpread: 0.5 });
    expect(source.records[0]).not.toHaveProperty("quoteCoinSymbol");
    expect(source.records[1]).toMatchObject({ quoteCoinSymbol: "USD" });
    expect(source.records[1]).not.toHaveProperty("quoteCoinId");
    expect(source.records[2]).toMatchObject({ bidAskSpread: 0.15, type: "project" });
    // the blank line 3 is skipped but still counted
    expect([0, 1, 2].map((i) => source.locate(i))).toEqual(["line 2", "line 4", "line 5"]);
  });

  it("leaves non-numeric metric cells as strings and identifiers untouched", async () => {
    const source = await readRecords(fixture("v1.csv"));
    expect(source.records[1]).toEqual({
      date: "2024-05-01",
      exchangeId: "kraken",
      baseCoinId: "bitcoin",
      quoteCoinSymbol: "usd",
    });
    expect(source.records[2]).toMatchObject({ bidDepth50: "1,5", orderFillVolumeMaker: -12.5 });
    expect(source.records[2]).not.toHaveProperty("bidAskSpread");
    const ids = parseCsv(Buffer.from("date,exchangeId,bidAskSpread\n2024-01-01,123,1e999\n"));
    // A decimal too large for a double is a number still, sent as 1e999 (batch-json.ts): the
    // service answers "Number must be finite", not "Expected number, received string".
    expect(ids.records[0]).toEqual({
      date: "2024-01-01",
      exchangeId: "123",
      bidAskSpread: Number.POSITIVE_INFINITY,
    });
  });

  it("keeps line numbers right across CRLF and quoted cells spanning lines", () => {
    const text = 'date,exchangeId\r\n"2024-01-01",a\r\n\r\n"2024-\r\n01-02",b\r\n2024-01-03,c';
    const source = parseCsv(Buffer.from(text));
    expect([0, 1, 2].map((i) => source.locate(i))).toEqual(["line 2", "line 4", "line 6"]);
  });

  it("reads a JSON array and a {data} object, locating records by their opening brace", async () => {
    const array = await readRecords(fixture("v2-records.json"));
    expect([0, 1, 2].map((i) => array.locate(i))).toEqual(["line 2", "line 30", "line 58"]);
    // A field: its own line (the last of a repeated key, like JSON.parse); unknown: the record's.
    expect(array.locate(1, "bidAskSpread")).toBe("line 50");
    expect(array.locate(1, "date")).toBe("line 31");
    expect(array.locate(1, "nonexistent")).toBe("line 30");
    const wrapped = await readRecords(writeWrappedJson());
    expect(wrapped.records).toHaveLength(3);
    expect([0, 1, 2].map((i) => wrapped.locate(i))).toEqual(["line 4", "line 5", "line 6"]);
  });

  it("points a field at its own key in the record, not at a nested key of the same name", () => {
    const text = [
      "[",
      "  {",
      '    "note": { "bidAskSpread": 1 },',
      '    "bidAskSpread": 2,',
      '    "date": "2024-01-01",',
      '    "bidAskSpread": 3',
      "  },",
      '  { "bidAskSpread": 4 }',
      "]",
    ].join("\n");
    const source = parseJson(text);
    expect(source.locate(0, "bidAskSpread")).toBe("line 6");
    expect(source.locate(0, "date")).toBe("line 5");
    expect(source.locate(1, "bidAskSpread")).toBe("line 8");
  });

  it("tells a CSV with another delimiter apart, with one hint instead of a problem per field", () => {
    for (const [delimiter, name] of [
      [";", "';'"],
      ["\t", "tab"],
    ] as const) {
      const text = `date${delimiter}exchangeId${delimiter}baseCoinId\n2024-01-01${delimiter}binance${delimiter}bitcoin\n`;
      expect(() => parseCsv(Buffer.from(text), "desk.csv")).toThrow(
        `desk.csv: the header row has one column, 'date${delimiter}exchangeId${delimiter}baseCoinId': fields must be separated by commas, and this file seems to use ${name}`,
      );
    }
  });

  it("falls back to record numbers when JSON records share a line", async () => {
    const minified = await readRecords(
      writeTemp("minified.json", JSON.stringify({ data: readV2Records() })),
    );
    expect([0, 1].map((i) => minified.locate(i))).toEqual(["record 1", "record 2"]);
  });

  it("refuses missing, malformed and unsupported files as usage errors", async () => {
    await expect(readRecords(fixture("absent.csv"))).rejects.toThrow(/no such file/);
    await expect(readRecords(fixture("v2.txt"))).rejects.toBeInstanceOf(RecordFileError);
    expect(() => parseCsv(Buffer.from("a,b\n1,2\n3,4,5\n"))).toThrow(/line 3/);
    expect(() => parseCsv(Buffer.from("a,a\n1,2\n"))).toThrow(/appears twice/);
    const bad = writeTemp("bad.json", '{"data": {}}');
    await expect(readRecords(bad)).rejects.toThrow(/array of records/);
  });

  it("locates malformed JSON by line, and says an empty JSON file is empty", () => {
    const text =
      '[\n  {"date": "2024-01-01"},\n  {"date": "2024-01-02"}\n  {"date": "2024-01-03"}\n]\n';
    expect(() => parseJson(text, "desk.json")).toThrow(/^desk\.json: invalid JSON on line 4: /);
    expect(() => parseJson(" \n", "empty.json")).toThrow("empty.json: empty JSON file");
  });

  it("refuses a file that is not UTF-8 (a Latin-1 é would be sent as U+FFFD)", async () => {
    const latin1 = Buffer.from(
      "date,exchangeId,baseCoinId,quoteCoinSymbol\n2024-01-01,kraken,bitcoin,\xe9\n",
      "latin1",
    );
    for (const name of ["latin1.csv", "latin1.json"]) {
      await expect(readRecords(writeTemp(name, latin1))).rejects.toThrow(
        `${name}: not UTF-8 text; save it as UTF-8`,
      );
    }
    const utf8 = writeTemp("utf8.csv", latin1.toString("latin1"));
    expect((await readRecords(utf8)).records).toEqual([
      { date: "2024-01-01", exchangeId: "kraken", baseCoinId: "bitcoin", quoteCoinSymbol: "é" },
    ]);
  });
});

describe("submit command", () => {
  it("submits a v2 CSV and reports what was created, with exit code 0", async () => {
    const result = await submit([fixture("v2.csv"), ...withServer()]);
    expect(result.stdout).toBe("created 3, updated 0, rejected 0\n");
    expect(result.code).toBe(0);
    expect(service.received).toHaveLength(1);
    const [request] = service.received;
    expect(request?.path).toBe("/api/v2/report");
    expect(request?.headers.authorization).toBe(KEY);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers["x-dry-run"]).toBeUndefined();
    expect(request?.data[0]).toMatchObject({ bidDepthTob: 1001, quoteCoinId: "tether" });

    const again = await submit([fixture("v2.csv"), ...withServer()]);
    expect(again.stdout).toBe("created 0, updated 3, rejected 0\n");
  });

  it("sends x-dry-run and stores nothing on a dry run", async () => {
    const dry = await submit([fixture("v2.csv"), ...withServer(), "--dry-run"]);
    expect(service.received[0]?.headers["x-dry-run"]).toBe("true");
    expect(dry.stdout).toBe("dry run, nothing stored: created 3, updated 0, rejected 0\n");
    expect(dry.code).toBe(0);
    expect(service.stored.size).toBe(0);
  });

  it("lists rejected records by line and field, with exit code 1", async () => {
    const result = await submit([fixture("v2-problems.csv"), ...withServer()]);
    expect(result.stdout).toBe(
      [
        "created 0, updated 0, rejected 2 (records of rejected batches not stored: 2)",
        "line 3 bidAskSpread: Expected number, received string",
        "line 4 bidAskSpread: Number must be less than or equal to 100",
        "",
      ].join("\n"),
    );
    expect(result.code).toBe(1);
    expect(service.received[0]?.data[1]?.bidAskSpread).toBe("abc");
  });

  it("maps problems of later batches to the right records", async () => {
    const problems = await submit([
      fixture("v2-records.json"),
      ...withServer(),
      "--batch-size",
      "1",
    ]);
    expect(problems.stdout).toContain(
      "created 2, updated 0, rejected 1 (records of rejected batches not stored: 0)\n",
    );
    // The record starts on line 30; its bidAskSpread sits on line 50.
    expect(problems.stdout).toContain("line 50 bidAskSpread: Number must be less than or equal");
  });

  // A duplicate in another batch was sent on: the later row silently overwrote the earlier.
  it("refuses a file holding one record key twice, in one batch or across batches, sending nothing", async () => {
    for (const size of ["1", "2", "300"]) {
      const result = await submit([writeWrappedJson(), ...withServer(), "--batch-size", size]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        /^submit: .*wrapped\.json: 1 record has the record key of an earlier one \(date, exchangeId, baseCoinId, quote, instrumentType\); nothing was sent\nline 6: Duplicate record key \(same as line 4\)\n$/,
      );
    }
    expect(service.received).toHaveLength(0);

    // v1: the key has no instrumentType; a quote symbol counts upper-cased, as the service's.
    const rows = [
      "2024-01-01,binance,bitcoin,,usd",
      "2024-01-02,binance,bitcoin,tether,",
      "2024-01-01,binance,bitcoin,,USD",
      "2024-01-01,binance,ethereum,,usd",
      "2024-01-02,binance,bitcoin,tether,",
    ];
    const csv = writeTemp(
      "duplicates.csv",
      `date,exchangeId,baseCoinId,quoteCoinId,quoteCoinSymbol\n${rows.join("\n")}\n`,
    );
    const v1 = await submit([csv, ...withServer(), "--v1", "--dry-run", "--batch-size", "2"]);
    expect(v1.code).toBe(2);
    expect(v1.stderr.split("\n").slice(1)).toEqual([
      "line 4: Duplicate record key (same as line 2)",
      "line 6: Duplicate record key (same as line 3)",
      "",
    ]);
    expect(service.received).toHaveLength(0);
  });

  it("tells records of another instrument type or quote apart", async () => {
    const [first] = readV2Records();
    const perp = { ...first, instrumentType: "perp" };
    const otherQuote = { ...first, quoteCoinId: "usd-coin" };
    const file = writeTemp("distinct.json", JSON.stringify([first, perp, otherQuote]));
    const result = await submit([file, ...withServer(), "--batch-size", "1"]);
    expect(result.code).toBe(0);
    expect(service.received).toHaveLength(3);
  });

  it("splits input by the version's limit: 300 for v2, 1000 for v1", async () => {
    const v2 = await submit([writeRecords(601, "many.csv"), ...withServer(), "--dry-run"]);
    expect(service.received.map((request) => request.data.length)).toEqual([300, 300, 1]);
    expect(service.received.every((request) => request.path === "/api/v2/report")).toBe(true);
    expect(v2.stderr).toContain("batch 3/3 (line 602): rejected\n");

    service.reset();
    const v1 = await submit([writeRecords(1001, "many.csv"), ...withServer(), "--v1"]);
    expect(service.received.map((request) => request.data.length)).toEqual([1000, 1]);
    expect(service.received[0]?.path).toBe("/api/v1/report");
    expect(v1.stdout).toBe("created 1001, updated 0, rejected 0\n");
    expect(v1.stderr).toBe(
      "batch 1/2 (line 2 to line 1001): accepted\nbatch 2/2 (line 1002): accepted\n",
    );
    expect(v1.code).toBe(0);
  });

  it("retries a 503 with backoff and a 429 as its Retry-After says", async () => {
    service.script.push(
      { status: 503, body: { message: "Service Unavailable", statusCode: 503 } },
      {
        status: 429,
        body: { message: "Too Many Requests", statusCode: 429 },
        headers: { "retry-after": "0" },
      },
    );
    const result = await submit([fixture("v2.csv"), ...withServer()]);
    expect(service.received).toHaveLength(3);
    expect(sleeps).toEqual([500, 0]);
    // The wait as it is: half a second is not "1s".
    expect(result.stderr).toContain("batch 1: HTTP 503: Service Unavailable; retrying in 0.5s\n");
    expect(result.stdout).toBe("created 3, updated 0, rejected 0\n");
    expect(result.code).toBe(0);
  });

  it("gives up on a batch after bounded retries and exits 1", async () => {
    const unavailable = { status: 503, body: { message: "Service Unavailable", statusCode: 503 } };
    service.script.push(...Array.from({ length: 5 }, () => unavailable));
    const result = await submit([fixture("v2.csv"), ...withServer()]);
    expect(service.received).toHaveLength(5);
    expect(sleeps).toEqual([500, 1000, 2000, 4000]);
    expect(result.stdout).toBe(
      [
        "created 0, updated 0, rejected 0, failed batches 1 (records not stored: 3)",
        "batch 1 (line 2 to line 5) not stored: HTTP 503: Service Unavailable",
        "",
      ].join("\n"),
    );
    expect(result.code).toBe(1);
  });

  it("says a batch whose answer was lost may or may not be stored, not that it was not", async () => {
    // Stored, then the connection closed before the answer: every attempt alike.
    service.script.push(...Array.from({ length: 5 }, () => "drop" as const));
    const result = await submit([fixture("v2.csv"), ...withServer()]);
    expect(service.received).toHaveLength(5);
    expect(service.stored.size).toBe(3);
    expect(result.stdout).toBe(
      [
        "created 0, updated 0, rejected 0, answer lost for 1 batch(es) (records that may or may not be stored: 3)",
        "batch 1 (line 2 to line 5) may or may not be stored, its answer was lost: network error: other side closed",
        "submit the file again to find out and to send what is missing: a batch already stored is answered from the service's record (its Idempotency-Key, within 24 hours), not stored twice",
        "",
      ].join("\n"),
    );
    expect(result.stdout).not.toContain("not stored:");
    expect(result.code).toBe(1);

    // One lost answer makes the batch uncertain, even when later attempts met a 503.
    service.reset();
    const unavailable = { status: 503, body: { message: "Service Unavailable", statusCode: 503 } };
    service.script.push("drop", ...Array.from({ length: 4 }, () => unavailable));
    const json = await submit([fixture("v2.csv"), ...withServer(), "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      failedRecords: 0,
      mayBeStoredBatches: 1,
      mayBeStoredRecords: 3,
      failedBatches: [{ batch: 1, status: 503, mayBeStored: true }],
    });
    expect(json.code).toBe(1);
  });

  it("says a batch answered 503 on every attempt was not stored", async () => {
    const unavailable = { status: 503, body: { message: "Service Unavailable", statusCode: 503 } };
    service.script.push(...Array.from({ length: 5 }, () => unavailable));
    const json = await submit([fixture("v2.csv"), ...withServer(), "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      failedRecords: 3,
      mayBeStoredBatches: 0,
      mayBeStoredRecords: 0,
      failedBatches: [{ batch: 1, status: 503, mayBeStored: false }],
    });
  });

  it("stops when the service cannot be reached, sending no later batch, and says how to resume", async () => {
    // A loopback port nothing listens on: connection refused.
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const args = [fixture("v2.csv"), "--url", `http://127.0.0.1:${port}`, "--key", KEY];
    const result = await submit([...args, "--batch-size", "1"]);
    expect(sleeps).toEqual([500, 1000, 2000, 4000]);
    expect(result.stdout).toBe(
      [
        "created 0, updated 0, rejected 0, failed batches 3 (records not stored: 3)",
        `batch 1 (line 2) not stored: network error: connect ECONNREFUSED 127.0.0.1:${port}`,
        "2 batch(es) not sent (line 4 to line 5): the service could not be reached",
        "submit the file again to send what is missing: a batch already stored is answered from the service's record (its Idempotency-Key, within 24 hours), not stored twice",
        "",
      ].join("\n"),
    );
    expect(result.stderr).toContain(
      `submit: the service could not be reached (network error: connect ECONNREFUSED 127.0.0.1:${port}); nothing more was sent\n`,
    );
    expect(result.code).toBe(1);
    const json = await submit([...args, "--batch-size", "1", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      failedRecords: 3,
      notSentBatches: 2,
      notSentRecords: 2,
      mayBeStoredBatches: 0,
      failedBatches: [
        { batch: 1, notSent: false },
        { batch: 2, notSent: true, message: "not sent: the service could not be reached" },
        { batch: 3, notSent: true },
      ],
    });
  });

  it("stops at a 404 of the submission route: the URL is wrong", async () => {
    const message = "Route POST /prefix/api/v2/report not found";
    service.script.push({ status: 404, body: { message, error: "Not Found", statusCode: 404 } });
    const result = await submit([fixture("v2.csv"), ...withServer(), "--batch-size", "1"]);
    expect(service.received).toHaveLength(1);
    expect(result.stdout).toContain(
      "2 batch(es) not sent (line 4 to line 5): the service has no submission route at this URL (check --url)\n",
    );
    expect(result.stderr).toContain(
      `submit: the service has no submission route at this URL (check --url) (HTTP 404: ${message}); nothing more was sent\n`,
    );
    expect(result.code).toBe(1);
  });

  it("does not count a batch stored by an earlier run (its answer replayed) as created by this one", async () => {
    const replayed = {
      status: 201,
      body: { createdCount: 2, updatedCount: 0 },
      headers: { "idempotent-replayed": "true" },
    };
    service.script.push(replayed);
    const args = [writeRecords(3, "rerun.csv"), ...withServer(), "--v1", "--batch-size", "2"];
    const result = await submit(args);
    expect(result.stdout).toBe(
      [
        "created 1, updated 0, rejected 0, 1 batch(es) (2 records) already stored by an earlier run (answers replayed): nothing changed",
        "if these reports were changed since that run, submit the file with --fresh-keys to apply it again",
        "",
      ].join("\n"),
    );
    expect(result.stderr).toContain("batch 1/2 (line 2 to line 3): replayed\n");
    expect(result.code).toBe(0);
    service.script.push(replayed);
    const json = await submit([...args, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      created: 0,
      updated: 1,
      replayedBatches: 1,
      replayedRecords: 2,
    });
  });

  it("--json says stored: true only when a batch was stored, by this run or (replayed) an earlier one", async () => {
    const stored = async (args: string[]) => JSON.parse((await submit(args)).stdout).stored;
    const file = writeRecords(3, "stored.csv");
    const replayed = { status: 201, body: { createdCount: 3, updatedCount: 0 } };
    const json = [...withServer(), "--json"];
    // v2 without v2's fields: every batch rejected.
    expect(await stored([file, ...json])).toBe(false);
    expect(await stored([file, ...json, "--v1", "--key", "refused-key"])).toBe(false);
    expect(await stored([file, ...json, "--v1", "--dry-run"])).toBe(false);
    service.script.push({ ...replayed, headers: { "idempotent-replayed": "true" } });
    expect(await stored([file, ...json, "--v1"])).toBe(true);
    expect(await stored([file, ...json, "--v1"])).toBe(true);
  });

  it("suggests a smaller --batch-size when a batch is too large for the service (413)", async () => {
    const message = "Request body is larger than the limit";
    service.script.push({ status: 413, body: { message, statusCode: 413 } });
    const result = await submit([fixture("v2.csv"), ...withServer()]);
    expect(result.stdout).toContain(
      `batch 1 (line 2 to line 5) not stored: HTTP 413: ${message} (records this wide need a smaller --batch-size)\n`,
    );
    expect(result.code).toBe(1);
  });

  it("stops at a 401 with a clear message and sends nothing more", async () => {
    const result = await submit([
      fixture("v2.csv"),
      "--url",
      service.url,
      "--key",
      "wrong",
      "--batch-size",
      "1",
    ]);
    expect(service.received).toHaveLength(1);
    expect(result.stderr).toContain("submit: the service refused the API key (Invalid API key)");
    expect(result.stdout).toContain(
      "2 batch(es) not sent (line 4 to line 5): the API key was refused",
    );
    expect(result.code).toBe(1);
  });

  it("stops at a 403 (a project or operator key reads only) and sends nothing more", async () => {
    const forbidden = {
      statusCode: 403,
      error: "Forbidden",
      message: "This API key cannot submit reports",
    };
    service.script.push({ status: 403, body: forbidden });
    const result = await submit([
      fixture("v2.csv"),
      "--url",
      service.url,
      "--key",
      KEY,
      "--batch-size",
      "1",
    ]);
    expect(service.received).toHaveLength(1);
    expect(result.stderr).toContain(
      "submit: the service refused the API key (This API key cannot submit reports)",
    );
    expect(result.code).toBe(1);
  });

  it("takes the URL and key from the environment", async () => {
    const env = { TRADING_REPORTS_URL: `${service.url}/`, TRADING_REPORTS_API_KEY: KEY };
    const result = await submit([fixture("v1.csv"), "--v1"], env);
    expect(service.received[0]?.headers.authorization).toBe(KEY);
    expect(service.received[0]?.path).toBe("/api/v1/report");
    expect(result.code).toBe(1); // "1,5" and -12.5 on line 4
    expect(result.stdout).toContain("line 4 bidDepth50: Expected number, received string\n");
    expect(result.stdout).toContain("line 4 orderFillVolumeMaker: Number must be greater than");
  });

  it("draws a progress bar instead of lines when stderr is a terminal", async () => {
    const result = await submit([fixture("v2.csv"), ...withServer()], {}, { tty: true });
    expect(result.stderr).toContain("submitting [");
    expect(result.stderr).toContain("3/3 records");
    expect(result.stderr).not.toContain("batch 1/1");
    expect(result.stdout).toBe("created 3, updated 0, rejected 0\n");
  });

  it("prints a JSON summary with --json", async () => {
    const result = await submit([fixture("v2-records.json"), ...withServer(), "--json"]);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      ok: false,
      version: "v2",
      records: 3,
      created: 0,
      rejectedRecords: 1,
      notStored: 2,
      rejected: [{ index: 1, location: "line 50", field: "bidAskSpread" }],
    });
    expect(result.code).toBe(1);
  });

  it.each([
    ["a missing key", [fixture("v2.csv"), "--url", "http://127.0.0.1:9"], /missing API key/],
    ["a missing URL", [fixture("v2.csv"), "--key", KEY], /missing --url/],
    ["a bad URL", [fixture("v2.csv"), "--url", "ftp://x", "--key", KEY], /invalid --url/],
    ["a missing file", [fixture("absent.csv"), "--url", "http://x", "--key", KEY], /no such file/],
    [
      "a batch size over the limit",
      [fixture("v2.csv"), "--url", "http://x", "--key", KEY, "--batch-size", "301"],
      /1 to 300/,
    ],
    [
      "a batch size that is no number",
      [fixture("v2.csv"), "--url", "http://x", "--key", KEY, "--batch-size", "1.5"],
      /1 to 300/,
    ],
    ["an unknown option", [fixture("v2.csv"), "--force"], /unknown option/],
    ["no file argument", [], /missing required argument/],
  ])("exits 2 on %s without sending anything", async (_case, args, message) => {
    const result = await submit(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(service.received).toHaveLength(0);
  });

  it("with --all-or-nothing, dry-runs every batch and stores nothing when one has a problem", async () => {
    // v1 CSV rows of 4 records; batches of 2: the problem sits in the second batch.
    const file = writeTemp(
      "mixed.csv",
      "date,exchangeId,baseCoinId,quoteCoinId,bidAskSpread\n" +
        "2024-01-01,binance,bitcoin,tether,0.5\n2024-01-02,binance,bitcoin,tether,0.5\n" +
        "2024-01-03,binance,bitcoin,tether,0.5\n2024-01-04,binance,bitcoin,tether,150\n",
    );
    const args = [file, ...withServer(), "--v1", "--batch-size", "2", "--all-or-nothing"];
    const refused = await submit(args);
    expect(refused.code).toBe(1);
    expect(service.received.map((r) => r.headers["x-dry-run"])).toEqual(["true", "true"]);
    expect(service.stored.size).toBe(0);
    expect(refused.stdout).toBe(
      [
        "all or nothing: the dry run found problems, so nothing was stored; what the dry run answered: created 2, updated 0, rejected 1 (records of rejected batches not stored: 1)",
        "line 5 bidAskSpread: Number must be less than or equal to 100",
        "",
      ].join("\n"),
    );
    // Without the option, the first batch would have been stored.
    service.reset();
    expect((await submit(args.slice(0, -1))).code).toBe(1);
    expect(service.stored.size).toBe(2);
  });

  /** v1 records in batches of 2, all or nothing. */
  const allOrNothing = (file: string, ...more: string[]) =>
    submit([file, ...withServer(), "--v1", "--batch-size", "2", "--all-or-nothing", ...more]);

  it("with --all-or-nothing, stores every batch after a clean dry run of all of them", async () => {
    const result = await allOrNothing(writeRecords(5, "clean.csv"), "--json");
    expect(result.code).toBe(0);
    expect(service.received.map((r) => r.headers["x-dry-run"] ?? "stored")).toEqual([
      "true",
      "true",
      "true",
      "stored",
      "stored",
      "stored",
    ]);
    expect(service.stored.size).toBe(5);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: true,
      allOrNothing: true,
      stored: true,
      created: 5,
    });
  });

  it("with --all-or-nothing, sends no batch after one that fails once the dry run was clean", async () => {
    const counts = (n: number) => ({ status: 201, body: { createdCount: n, updatedCount: 0 } });
    const unavailable = { status: 503, body: { message: "Service Unavailable", statusCode: 503 } };
    // Three clean dry runs, the first batch stored, the second unavailable through its retries.
    service.script.push(counts(2), counts(2), counts(1), counts(2));
    service.script.push(...Array.from({ length: 5 }, () => unavailable));
    const result = await allOrNothing(writeRecords(5, "interrupted.csv"));
    expect(result.code).toBe(1);
    expect(service.received).toHaveLength(3 + 1 + 5);
    expect(result.stdout).toBe(
      [
        "created 2, updated 0, rejected 0, failed batches 2 (records not stored: 3)",
        "batch 2 (line 4 to line 5) not stored: HTTP 503: Service Unavailable",
        "1 batch(es) not sent (line 6): batch 2 failed (all or nothing: no batch is sent after it)",
        "submit the file again to send what is missing: a batch already stored is answered from the service's record (its Idempotency-Key, within 24 hours), not stored twice",
        "",
      ].join("\n"),
    );
  });

  it("exits 2 with one hint for a CSV separated by semicolons", async () => {
    const file = writeTemp(
      "semicolons.csv",
      "date;exchangeId;baseCoinId\n2024-01-01;binance;bitcoin\n",
    );
    const result = await submit([file, ...withServer()]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toEqual([
      `submit: ${file}: the header row has one column, 'date;exchangeId;baseCoinId': fields must be separated by commas, and this file seems to use ';'`,
    ]);
    expect(service.received).toHaveLength(0);
  });

  it("lists the accepted files and the exit codes in its help", async () => {
    const help = await submit(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("a .csv or .json file");
    expect(help.stdout).toMatch(/Exit codes:\n {2}0 +every batch stored/);
    for (const code of ["1", "2", "130", "143"])
      expect(help.stdout).toMatch(new RegExp(`\n  ${code} `));
  });

  it("exits 2 for a file holding no records", async () => {
    const result = await submit([writeTemp("empty.json", "[]"), ...withServer()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("no records to submit");
  });
});

describe("submit with a closed output", () => {
  /** A pipe whose reader went away (`2>&1 | head -1`): every write fails with EPIPE. */
  const closedPipe = (written: string[]) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.toString("utf8"));
        done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });

  async function submitTo(stdout: Writable, stderr: Writable, args: string[]) {
    const program = new Command().exitOverride();
    const exit = { code: -1 };
    registerSubmitCommand(program, { stdout, stderr, env: {}, sleep: async () => {} }, exit);
    await program.parseAsync(["node", "trading-reports", "submit", ...args]);
    // A stream's error is emitted on a later tick: let it come, as it would before exiting.
    await new Promise((resolve) => setImmediate(resolve));
    return exit.code;
  }

  it("sends every batch and prints its summary when stderr is closed (EPIPE)", async () => {
    const progress: string[] = [];
    const stdout = sink();
    const args = [writeRecords(5, "epipe.csv"), ...withServer(), "--v1", "--batch-size", "2"];
    const code = await submitTo(stdout.stream, closedPipe(progress), args);
    expect(service.received).toHaveLength(3);
    expect(stdout.text()).toBe("created 5, updated 0, rejected 0\n");
    expect(code).toBe(0);
    // The first progress line failed: no more were written.
    expect(progress.length).toBeLessThanOrEqual(2);
  });

  it("still exits with the run's outcome when stdout is closed too", async () => {
    const file = writeTemp("epipe-problems.csv", readFileSync(fixture("v2-problems.csv")));
    const code = await submitTo(closedPipe([]), closedPipe([]), [file, ...withServer()]);
    expect(service.received).toHaveLength(1);
    expect(code).toBe(1);
  });
});

describe("the note of an interrupted run", () => {
  const answered = (outcome: "accepted" | "rejected", batch: number) => ({
    batch,
    batches: 4,
    offset: batch - 1,
    size: 1,
    outcome,
    attempts: 1,
  });

  it("counts what was stored, names the batch in flight and those not sent", () => {
    const run = { batches: 4, dryRun: false, freshKeys: false };
    expect(interruptionNote([answered("accepted", 1), answered("rejected", 2)], run)).toBe(
      "submit: interrupted; 2 of 4 batch(es) answered, 1 of them stored; batch 3 was being sent and may or may not be stored; batch 4 not sent; submitting the file again is safe: a batch already stored is answered from the service's record (its Idempotency-Key, within 24 hours), not stored twice\n",
    );
    expect(interruptionNote([], { ...run, freshKeys: true })).toBe(
      "submit: interrupted; 0 of 4 batch(es) answered, 0 of them stored; batch 1 was being sent and may or may not be stored; batches 2 to 4 not sent; submitting the file again applies the stored batches again (--fresh-keys)\n",
    );
    // Named by its lines too, as the rest of the output names batches.
    const locate = (from: number, to: number) =>
      from === to ? `line ${from + 1}` : `line ${from + 1} to line ${to + 1}`;
    expect(interruptionNote([answered("accepted", 1)], { ...run, locate })).toContain(
      "; batch 2 (line 3) was being sent and may or may not be stored; batches 3 to 4 (line 4 to line 5) not sent;",
    );
    expect(interruptionNote([], { ...run, dryRun: true })).toBe(
      "submit: interrupted; 0 of 4 batch(es) answered, nothing stored (a dry run); batch 1 was being sent; batches 2 to 4 not sent\n",
    );
  });
});

describe("submitBatches", () => {
  it("retries network errors and reports each retry", async () => {
    let calls = 0;
    const flakyFetch: typeof fetch = async (input, init) => {
      calls++;
      if (calls === 1) throw new TypeError("fetch failed", { cause: new Error("ECONNRESET") });
      return fetch(input, init);
    };
    const retries: string[] = [];
    const result = await submitBatches({
      url: service.url,
      key: KEY,
      version: "v2",
      dryRun: false,
      records: (await readRecords(fixture("v2.csv"))).records,
      fetch: flakyFetch,
      sleep: async () => {},
      onRetry: (notice) => retries.push(notice.reason),
    });
    expect(retries).toEqual(["network error: ECONNRESET"]);
    expect(result).toMatchObject({ created: 3, updated: 0, rejected: [], failedBatches: [] });
  });

  it("retries a batch whose success answer cannot be read, with its Idempotency-Key (it may be stored)", async () => {
    const keys: (string | null)[] = [];
    const garbled =
      (bodies: string[]): typeof fetch =>
      async (_input, init) => {
        keys.push(new Headers(init?.headers).get("idempotency-key"));
        return new Response(bodies.shift() ?? '{"createdCount": 0, "updatedCount": 1}', {
          status: 201,
          headers: { "content-type": "application/json" },
        });
      };
    const options = {
      url: service.url,
      key: KEY,
      version: "v2" as const,
      dryRun: false,
      records: [{}],
      sleep: async () => {},
    };
    // An answer cut short, then the kept 201 that the retry's Idempotency-Key gets back.
    const cut = await submitBatches({ ...options, fetch: garbled(['{"createdCount": 1']) });
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(1);
    expect(cut).toMatchObject({ created: 0, updated: 1, failedBatches: [] });
    // Never readable: the batch is named, and the message says what to do.
    const never = await submitBatches({
      ...options,
      maxRetries: 2,
      fetch: garbled(Array.from({ length: 3 }, () => "<html>ok</html>")),
    });
    expect(never.failedBatches).toMatchObject([
      {
        batch: 1,
        offset: 0,
        size: 1,
        message: "the service's answer could not be read",
        mayBeStored: true,
      },
    ]);
  });

  it("words a TLS failure in one line, without OpenSSL's error queue, and stops there", async () => {
    const openssl =
      "805CA4ADBA7F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n";
    const tlsMismatch: typeof fetch = async () => {
      const cause = Object.assign(new Error(openssl), { code: "ERR_SSL_WRONG_VERSION_NUMBER" });
      throw new TypeError("fetch failed", { cause });
    };
    const retries: string[] = [];
    const result = await submitBatches({
      url: "https://127.0.0.1:1",
      key: KEY,
      version: "v2",
      dryRun: false,
      records: [{}, {}],
      batchSize: 1,
      fetch: tlsMismatch,
      sleep: async () => {},
      onRetry: (notice) => retries.push(notice.reason),
    });
    const message = "network error: TLS: wrong version number (ERR_SSL_WRONG_VERSION_NUMBER)";
    expect(retries[0]).toBe(message);
    expect(result.failedBatches).toMatchObject([
      { batch: 1, message, mayBeStored: false },
      { batch: 2, notSent: true },
    ]);
  });

  it("refuses a batch size beyond the version's limit", async () => {
    const options = { url: service.url, key: KEY, dryRun: false, records: [{}] };
    await expect(submitBatches({ ...options, version: "v2", batchSize: 301 })).rejects.toThrow(
      RangeError,
    );
    await expect(
      submitBatches({ ...options, version: "v1", batchSize: 1000, maxRetries: 0 }),
    ).resolves.toMatchObject({ rejectedBatches: 1 });
  });
});

import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { v1Record, v2Record } from "./helpers/fixture.js";
import {
  dayAfter,
  listedOn,
  listReports,
  type Problem,
  problemsOf,
  rowCounts,
  submit,
  submitOk,
  type Version,
} from "./helpers/submission.js";

// A fixed clock, so that "yesterday" is a known date.
const TODAY = "2025-06-15";
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ now: () => new Date(`${TODAY}T12:00:00Z`) });
});
afterAll(async () => t?.close());

describe("the shape of the body", () => {
  const records = (n: number, version: Version) =>
    Array.from({ length: n }, (_, i) =>
      (version === 2 ? v2Record : v1Record)({ date: dayAfter("2010-01-01", i) }),
    );

  const problem = (message: string): Problem[] => [{ path: "data", message }];
  it.each([
    ["without data", 2, {}, problem("Required")],
    ["without data", 1, {}, problem("Required")],
    ["whose data is an object", 2, { data: { a: 1 } }, problem("Expected array, received object")],
    ["whose data is a string", 2, { data: "x" }, problem("Expected array, received string")],
    ["with no records", 2, { data: [] }, problem("Array must contain at least 1 element(s)")],
    ["with no records", 1, { data: [] }, problem("Array must contain at least 1 element(s)")],
    [
      "with 301 records",
      2,
      { data: records(301, 2) },
      problem("Array must contain at most 300 element(s)"),
    ],
    [
      "with 1001 records",
      1,
      { data: records(1001, 1) },
      problem("Array must contain at most 1000 element(s)"),
    ],
  ] as [
    string,
    Version,
    unknown,
    Problem[],
  ][])("a body %s is refused in v%s with its problem at path data", async (_what, version, body, expected) => {
    expect(problemsOf(await submit(t, version, body))).toEqual(expected);
  });

  it.each([
    [2, 300],
    [1, 1000],
  ] as [Version, number][])("a v%s batch of exactly %s records is accepted", async (version, n) => {
    const response = await submit(
      t,
      version,
      { data: records(n, version) },
      {
        headers: { "x-dry-run": "true" },
      },
    );
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ createdCount: n, updatedCount: 0 });
  });

  it("malformed JSON is a 400 with the one message 'Malformed JSON body'", async () => {
    const response = await submit(t, 2, '{"data": [');
    expect(response.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: [{ message: "Malformed JSON body" }],
    });
  });

  it("a body that is not UTF-8 is malformed JSON: refused whole, whatever charset it names", async () => {
    const before = await rowCounts(t);
    // A Latin-1 é (0xE9) and ÿ (0xFF) in the quote symbol: decoded as UTF-8 both would become
    // U+FFFD, one stored key, the second overwriting the first.
    const record = JSON.stringify(
      v2Record({ date: "2011-03-01", quoteCoinId: undefined, quoteCoinSymbol: "#" }),
    );
    for (const byte of [0xe9, 0xff]) {
      const [head, tail] = record.split("#") as [string, string];
      const payload = Buffer.concat([
        Buffer.from(`{"data":[${head}`),
        Buffer.from([byte]),
        Buffer.from(`${tail}]}`),
      ]);
      for (const contentType of ["application/json", "application/json; charset=iso-8859-1"]) {
        const response = await submit(t, 2, payload, { headers: { "content-type": contentType } });
        expect(problemsOf(response)).toEqual([{ message: "Malformed JSON body" }]);
      }
    }
    expect(await rowCounts(t)).toEqual(before);
    // The same characters sent as UTF-8 are two reports, each read back as sent.
    for (const symbol of ["é", "ÿ"]) {
      const body = { data: [{ ...JSON.parse(record), quoteCoinSymbol: symbol }] };
      expect((await submit(t, 2, body)).statusCode).toBe(201);
    }
    const listed = await listReports(t, { dateGte: "2011-03-01", dateLte: "2011-03-01" });
    expect(listed.map((r) => r.quoteCoinSymbol).sort()).toEqual(["É", "Ÿ"]);
  });

  it("a body over 120 KiB, read in pieces, reads as it would whole: every record, as sent", async () => {
    const data = records(300, 2).map((record, i) =>
      i === 150 ? { ...record, quoteCoinId: undefined, quoteCoinSymbol: "é" } : record,
    );
    // Unknown fields are ignored, and a "__proto__" key is dropped, in any piece.
    const oddFields = '"note":"},{\\"date\\":1},","__proto__":{"x":1},';
    const texts = data.map((record, i) =>
      JSON.stringify(record).replace("{", [0, 1, 150].includes(i) ? `{${oddFields}` : "{"),
    );
    const body = `{"data":[${texts.join(",")}]}`;
    expect(Buffer.byteLength(body)).toBeGreaterThan(120 * 1024);
    const malformed = `${body.slice(0, -2)},]}`;
    const before = await rowCounts(t);
    expect(problemsOf(await submit(t, 2, malformed))).toEqual([{ message: "Malformed JSON body" }]);
    expect(await rowCounts(t)).toEqual(before);

    const response = await submit(t, 2, body);
    expect(response.json()).toEqual({ createdCount: 300, updatedCount: 0 });
    const listed = await listReports(t, {
      dateGte: "2010-01-01",
      dateLte: dayAfter("2010-01-01", 299),
    });
    expect(listed).toHaveLength(300);
    expect(listed.filter((r) => r.quoteCoinSymbol === "É")).toHaveLength(1);
  });

  it("a member named twice counts once, with its last value, whether the body is read whole or in pieces", async () => {
    const twice = (record: object) =>
      JSON.stringify(record).replace('"bidDepth50":', '"bidDepth50":-1,"bidDepth50":');
    const small = [v2Record({ date: "2012-05-01", bidDepth50: 24001 })];
    const large = records(300, 2).map((r, i) => ({ ...r, date: dayAfter("2013-01-01", i) }));
    for (const data of [small, large]) {
      const body = `{"data":[],"data":[${data.map(twice).join(",")}]}`;
      expect(Buffer.byteLength(body) > 120 * 1024).toBe(data === large);
      const response = await submit(t, 2, body);
      expect(response.json()).toEqual({ createdCount: data.length, updatedCount: 0 });
      const first = data[0] as { date: string; bidDepth50: number };
      const [listed] = await listReports(t, { dateGte: first.date, dateLte: first.date });
      expect(listed?.bidDepth50).toBe(first.bidDepth50);
    }
  });

  it("a hostile body of 600,000 tiny records is refused whole, malformed or not, and stores nothing", async () => {
    const tiny = Array.from({ length: 600_000 }, () => "{}").join(",");
    const before = await rowCounts(t);
    // Every piece parses but the last: the pieces are given up and the whole body refused.
    const malformed = await submit(t, 2, `{"data":[${tiny},]}`);
    expect(problemsOf(malformed)).toEqual([{ message: "Malformed JSON body" }]);
    const tooMany = await submit(t, 2, `{"data":[${tiny}]}`);
    expect(problemsOf(tooMany)).toEqual([
      { path: "data", message: "Array must contain at most 300 element(s)" },
    ]);
    expect(await rowCounts(t)).toEqual(before);
  });

  it("an empty body labelled JSON is malformed JSON too", async () => {
    for (const version of [1, 2] as const) {
      const response = await submit(t, version, "", {
        headers: { "content-type": "application/json", "content-length": "0" },
      });
      expect(response.json()).toEqual({
        statusCode: 400,
        error: "Bad Request",
        message: [{ message: "Malformed JSON body" }],
      });
    }
  });

  it("a body that is not JSON is refused with 415", async () => {
    const response = await submit(t, 2, "data", { headers: { "content-type": "text/plain" } });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ statusCode: 415, message: expect.any(String) });
  });

  it("a compressed body is refused with 415 naming its Content-Encoding, not as malformed JSON", async () => {
    const record = JSON.stringify({ data: [v2Record({ date: "2025-06-01" })] });
    const before = await rowCounts(t);
    for (const contentEncoding of ["gzip", "br", "identity, gzip"]) {
      const response = await submit(t, 2, gzipSync(record), {
        headers: { "content-type": "application/json", "content-encoding": contentEncoding },
      });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toEqual({
        statusCode: 415,
        error: "Unsupported Media Type",
        message: "Unsupported Content-Encoding: send the body uncompressed",
      });
    }
    expect(await rowCounts(t)).toEqual(before);
    const identity = await submit(t, 2, record, {
      headers: { "content-encoding": "Identity", "x-dry-run": "true" },
    });
    expect(identity.statusCode).toBe(201);
  });

  it("a body over 2 MiB is refused with 413", async () => {
    const padding = "x".repeat(2 * 1024 * 1024);
    const response = await submit(t, 2, { data: [v2Record({ padding })] });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ statusCode: 413, message: expect.any(String) });
  });
});

describe("problems of a batch", () => {
  it("every problem of the batch is reported at once, in record and field order", async () => {
    const response = await submit(t, 2, {
      data: [
        v2Record({ date: "2021-01-01" }),
        v2Record({ bidDepth50: "x", date: "2025-02-30", baseCoinId: "nope" }),
        v2Record({ date: "2021-01-02" }),
        v2Record({ type: "x", exchangeId: "nope", topOfBookPercentage: 101 }),
      ],
    });
    expect(problemsOf(response)).toEqual([
      { path: "data.1.date", message: "Invalid date, expected YYYY-MM-DD" },
      {
        path: "data.1.baseCoinId",
        message: "Base coin with id 'nope' does not match any valid ticker id",
      },
      { path: "data.1.bidDepth50", message: "Expected number, received string" },
      {
        path: "data.3.exchangeId",
        message: "Exchange with id 'nope' does not match any supported exchange id",
      },
      { path: "data.3.topOfBookPercentage", message: "Number must be less than or equal to 100" },
      {
        path: "data.3.type",
        message: "Invalid enum value. Expected 'project' | 'exchange' | 'prop', received 'x'",
      },
    ]);
  });

  it("a later record with the key of an earlier one is a duplicate naming the first", async () => {
    const record = v2Record({ date: "2021-02-01" });
    const response = await submit(t, 2, {
      data: [record, v2Record({ date: "2021-02-02" }), record, { ...record, bidDepth50: 1 }],
    });
    expect(problemsOf(response)).toEqual([
      { path: "data.2", message: "Duplicate record key (same as data.0)" },
      { path: "data.3", message: "Duplicate record key (same as data.0)" },
    ]);
  });

  it("duplicates are judged after routing: spot data named for binance_futures is binance's", async () => {
    const response = await submit(t, 2, {
      data: [
        v2Record({ date: "2021-02-03", exchangeId: "binance_futures" }),
        v2Record({ date: "2021-02-03", exchangeId: "binance" }),
      ],
    });
    expect(problemsOf(response)).toEqual([
      { path: "data.1", message: "Duplicate record key (same as data.0)" },
    ]);
  });

  it("quote symbols differing only in case are one key", async () => {
    const record = { date: "2021-02-04", exchangeId: "kraken", quoteCoinId: undefined };
    const response = await submit(t, 1, {
      data: [
        v1Record({ ...record, quoteCoinSymbol: "usd" }),
        v1Record({ ...record, quoteCoinSymbol: "USD" }),
      ],
    });
    expect(problemsOf(response)).toEqual([
      { path: "data.1", message: "Duplicate record key (same as data.0)" },
    ]);
  });

  it("records of one pair with different instrument types are not duplicates", async () => {
    const counts = await submitOk(t, 2, [
      v2Record({ date: "2021-02-05", instrumentType: "spot" }),
      v2Record({ date: "2021-02-05", instrumentType: "perp" }),
    ]);
    expect(counts).toEqual({ createdCount: 2, updatedCount: 0 });
  });
  it.each([
    [2, { quoteCoinSymbol: 5 }, "quoteCoinSymbol", "Expected string, received number"],
    [1, { quoteCoinSymbol: ["USD"] }, "quoteCoinSymbol", "Expected string, received array"],
    [2, { quoteCoinId: 5 }, "quoteCoinId", "Expected string, received number"],
  ] as [
    Version,
    Record<string, unknown>,
    string,
    string,
  ][])("a malformed quote field in v%s is reported as such, not as a missing quote", async (version, quote, field, message) => {
    const record = version === 2 ? v2Record : v1Record;
    const data = [record({ date: "2021-02-06", quoteCoinId: undefined, ...quote })];
    expect(problemsOf(await submit(t, version, { data }))).toEqual([
      { path: `data.0.${field}`, message },
    ]);
  });
});

describe("accepted variations", () => {
  it("unknown fields are ignored", async () => {
    const counts = await submitOk(t, 2, [
      v2Record({ date: "2021-03-01", comment: "hi", extra: { a: 1 } }),
    ]);
    expect(counts).toEqual({ createdCount: 1, updatedCount: 0 });
  });

  it("quoteCoinSymbol is matched case-insensitively and stored upper-case", async () => {
    const record = {
      date: "2024-03-02",
      exchangeId: "kraken",
      quoteCoinId: undefined,
      quoteCoinSymbol: "uSd",
    };
    await submitOk(t, 2, [v2Record(record)]);
    const item = await listedOn(t, "2024-03-02");
    expect(item).toMatchObject({ quoteCoinSymbol: "USD", eligibilityStatus: "eligible" });
    expect(item).not.toHaveProperty("quoteCoinId");
  });

  it("a quoteCoinSymbol alongside a quoteCoinId is accepted and the id decides the key", async () => {
    await submitOk(t, 2, [v2Record({ date: "2021-03-03", quoteCoinSymbol: "whatever" })]);
    const again = await submitOk(t, 2, [v2Record({ date: "2021-03-03", quoteCoinSymbol: "USDT" })]);
    expect(again).toEqual({ createdCount: 0, updatedCount: 1 });
  });

  it("the earliest date, 2000-01-01, and yesterday are accepted", async () => {
    const counts = await submitOk(t, 2, [
      v2Record({ date: "2000-01-01" }),
      v2Record({ date: dayAfter(TODAY, -1) }),
    ]);
    expect(counts).toEqual({ createdCount: 2, updatedCount: 0 });
  });

  it("the range bounds 0 and 100 are accepted for percentages, and large depths too", async () => {
    const counts = await submitOk(t, 2, [
      v2Record({ date: "2021-03-04", bidAskSpread: 0, topOfBookPercentage: 100, bidDepth50: 1e15 }),
      v2Record({ date: "2021-03-05", bidAskSpread: 100, topOfBookPercentage: 0, bidDepth50: 0 }),
    ]);
    expect(counts).toEqual({ createdCount: 2, updatedCount: 0 });
  });

  it("a request without an API key is refused before validation with 401", async () => {
    const response = await submit(t, 2, { data: [] }, { key: "" });
    expect(response.statusCode).toBe(401);
    expect(Object.keys(response.json()).sort()).toEqual(["message", "statusCode"]);
  });
});

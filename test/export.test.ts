import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExport } from "../src/cli/export.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Records } from "./helpers/fixture.js";

let t: TestApp;
const COUNT = 2_450; // more than one export chunk
const ON_BINANCE = Math.ceil(((COUNT - 1) * 2) / 3);

beforeAll(async () => {
  t = await startTestApp();
  const v2 = v2Records(Math.ceil((COUNT - 1) / 3)).flatMap((r) => [
    r,
    { ...r, baseCoinId: "uniswap" },
    { ...r, instrumentType: "perp" },
  ]);
  const records = [
    ...v2.slice(0, COUNT - 1),
    v1Record({
      date: "2022-06-01",
      quoteCoinId: undefined,
      quoteCoinSymbol: "usd",
      exchangeId: "kraken",
    }),
  ];
  for (let i = 0; i < COUNT - 1; i += 300) {
    const r = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: records.slice(i, Math.min(i + 300, COUNT - 1)) },
    });
    expect(r.statusCode).toBe(201);
  }
  const v1 = await t.request({
    method: "POST",
    url: "/api/v1/report",
    key: KEYS.acme,
    payload: { data: [records.at(-1)] },
  });
  expect(v1.statusCode).toBe(201);
});
afterAll(async () => t?.close());

const csvRows = (body: string) => body.trimEnd().split("\r\n");

describe("CSV export", () => {
  it("streams every matching report, in listing order, when no page is given", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      key: KEYS.acme,
      headers: { accept: "text/csv" },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/csv; charset=utf-8");
    const rows = csvRows(response.body);
    expect(rows[0]?.split(",").slice(0, 5)).toEqual([
      "date",
      "exchangeId",
      "exchangeName",
      "baseCoinId",
      "baseCoinSymbol",
    ]);
    expect(rows[0]).not.toContain("instrumentType");
    expect(rows).toHaveLength(COUNT + 1);
    const json = (
      await t.request({ method: "GET", url: "/api/v1/reports?pageSize=3", key: KEYS.acme })
    ).json();
    expect(rows[1]?.startsWith(`${json.items[0].date},${json.items[0].exchangeId},`)).toBe(true);
    const dates = rows.slice(1).map((r) => r.split(",")[0] ?? "");
    expect([...dates].sort().reverse()).toEqual(dates);
  });

  it("leaves null fields empty for v1 reports", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports?exchangeId=kraken",
      key: KEYS.acme,
      headers: { accept: "text/csv" },
    });
    const [header, row] = csvRows(response.body);
    const cells = Object.fromEntries(
      (header ?? "").split(",").map((name, i) => [name, (row ?? "").split(",")[i]]),
    );
    expect(cells).toMatchObject({
      quoteCoinSymbol: "USD",
      bidAskSpread: "100",
      type: "",
      bidDepthTob: "",
      eligibilityReason: "before_collection_start",
    });
  });

  it("returns only the requested page when page is given, and applies filters", async () => {
    const page = await t.request({
      method: "GET",
      url: "/api/v1/reports?page=2&pageSize=5",
      key: KEYS.acme,
      headers: { accept: "text/csv" },
    });
    expect(csvRows(page.body)).toHaveLength(6);
    const filtered = await t.request({
      method: "GET",
      url: "/api/v1/reports?dateGte=2023-01-01&dateLte=2023-01-31",
      key: KEYS.acme,
      headers: { accept: "text/csv" },
    });
    expect(csvRows(filtered.body)).toHaveLength(31 * 3 + 1);
  });

  it.each([
    ["dateGte=bad", "dateGte"],
    // PostgreSQL text cannot hold NUL: refused up front rather than failing in SQL (a 500).
    ["exchangeId=a%00b", "exchangeId"],
  ])("answers query errors (%s) in the JSON error shape", async (query, path) => {
    const response = await t.request({
      method: "GET",
      url: `/api/v1/reports?${query}`,
      key: KEYS.acme,
      headers: { accept: "text/csv" },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message[0].path).toBe(path);
  });

  it("is written to a file by `trading-reports export`", async () => {
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    const address = t.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const dir = mkdtempSync(join(tmpdir(), "export-"));
    try {
      const out = join(dir, "reports.csv");
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
      const code = await runExport(
        { url: `http://127.0.0.1:${port}`, key: KEYS.acme, out, exchangeId: "binance" },
        io,
      );
      expect(code).toBe(0);
      expect(csvRows(readFileSync(out, "utf8"))).toHaveLength(ON_BINANCE + 1);
      expect(
        await runExport(
          { url: `http://127.0.0.1:${port}`, key: "wrong-key-000000", out, exchangeId: "binance" },
          io,
        ),
      ).toBe(1);
      expect(await runExport({ out }, io)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

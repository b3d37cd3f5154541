import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExport } from "../src/cli/export.js";
import { runSubmit } from "../src/cli/submit.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record, v2Records } from "./helpers/fixture.js";

let t: TestApp;
let dir: string;
let url: string;

const records = [
  ...v2Records(12),
  ...v2Records(5, { instrumentType: "perp", bidAskSpread: 0.125 }),
  ...v2Records(4, { baseCoinId: "uniswap", type: "exchange", topOfBookPercentage: 99.5 }),
  v2Record({
    exchangeId: "kraken",
    quoteCoinId: undefined,
    quoteCoinSymbol: "usd",
    orderFillVolumeMaker: 1e-7,
  }),
  // Exported as '=HYPERLINK (neutralised for spreadsheets); must come back as it was stored.
  v2Record({ exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "=HYPERLINK" }),
  // Text that looks neutralised already: exported with one quote more ('' and '''), read back
  // whole; without that, '=X would come back as =X, another record key.
  v2Record({ exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "'=X" }),
  v2Record({ exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "''+Y" }),
  // Whitespace around a symbol is part of it (and of the record key): quoted in the export,
  // so that the CLI, which trims unquoted cells, reads it back whole.
  v2Record({ exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: " =x" }),
  v2Record({ exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "eur " }),
];

beforeAll(async () => {
  t = await startTestApp();
  const stored = await t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    payload: { data: records },
  });
  expect(stored.json()).toEqual({ createdCount: records.length, updatedCount: 0 });
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const address = t.app.server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  dir = mkdtempSync(join(tmpdir(), "export-round-trip-"));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const listing = async () =>
  (await t.request({ method: "GET", url: "/api/v1/reports", key: KEYS.acme })).json();

const io = () => ({ stdout: new PassThrough(), stderr: new PassThrough(), env: {} });

describe("export, then submit the exported CSV", () => {
  it("updates every report with the same values and creates none", async () => {
    const before = await listing();
    const file = join(dir, "reports.csv");
    expect(await runExport({ url, key: KEYS.acme, out: file }, io())).toBe(0);
    const csv = readFileSync(file, "utf8");
    expect(csv.split("\r\n")[0]).toContain("instrumentType");
    expect(csv).toContain(",'=HYPERLINK,");
    expect(csv).toContain(',"EUR ",');

    const output = io();
    let summary = "";
    output.stdout.on("data", (chunk) => {
      summary += chunk;
    });
    const code = await runSubmit(file, { url, key: KEYS.acme, json: true }, output);
    expect(code).toBe(0);
    expect(JSON.parse(summary)).toMatchObject({
      ok: true,
      records: records.length,
      created: 0,
      updated: records.length,
      rejectedRecords: 0,
    });
    expect(await listing()).toEqual(before);
  });
});

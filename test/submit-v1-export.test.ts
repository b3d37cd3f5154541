import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExport } from "../src/cli/export.js";
import { runSubmit } from "../src/cli/submit.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture, KEYS, v1Record, v2Record } from "./helpers/fixture.js";

let t: TestApp;
let dir: string;
let url: string;
let exported: string;

// One exchange with spot and perp markets: v1 files its records as spot.
const fixture = baseFixture();
fixture.exchanges.push({
  id: "bybit",
  name: "Bybit",
  spot: true,
  derivatives: true,
  marketData: false,
});

const v1Reports = [
  v1Record({ date: "2025-02-01" }),
  // A derivatives-only exchange: v1 files its record as perp, and the export says so.
  v1Record({ date: "2025-02-01", exchangeId: "binance_futures" }),
  v1Record({ date: "2025-02-02", exchangeId: "bybit" }),
];
const v2Reports = [
  v2Record({ date: "2025-02-03" }),
  v2Record({ date: "2025-02-03", exchangeId: "bybit", instrumentType: "perp", type: "project" }),
];

beforeAll(async () => {
  t = await startTestApp({ fixture });
  for (const [version, data] of [
    ["v1", v1Reports],
    ["v2", v2Reports],
  ] as const) {
    const stored = await t.request({
      method: "POST",
      url: `/api/${version}/report`,
      key: KEYS.acme,
      payload: { data },
    });
    expect(stored.statusCode).toBe(201);
  }
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const address = t.app.server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  dir = mkdtempSync(join(tmpdir(), "submit-v1-export-"));
  exported = join(dir, "mixed.csv");
  expect(await runExport({ url, key: KEYS.acme, out: exported }, io())).toBe(0);
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const listing = async () =>
  (await t.request({ method: "GET", url: "/api/v1/reports", key: KEYS.acme })).json();

function io() {
  const output = { stdout: "", stderr: "" };
  const stdout = new PassThrough().on("data", (c) => (output.stdout += c));
  const stderr = new PassThrough().on("data", (c) => (output.stderr += c));
  return { stdout, stderr, env: {}, output };
}

async function submit(file: string, options: { v1?: boolean; key?: string } = {}) {
  const streams = io();
  const code = await runSubmit(file, { url, key: KEYS.acme, ...options }, streams);
  return { code, ...streams.output };
}

/** The exported CSV's header and data lines (no cell here holds a comma or a line break). */
function exportedLines() {
  const [header = "", ...rows] = readFileSync(exported, "utf8").trimEnd().split("\r\n");
  const typeColumn = header.split(",").indexOf("type");
  return { header, rows, isV1: (row: string) => row.split(",")[typeColumn] === "" };
}

describe("submit --v1 with v2 data", () => {
  it("refuses a mixed export, naming the v2 rows and how to split the file, and sends nothing", async () => {
    const before = await listing();
    const { rows, isV1 } = exportedLines();
    const v2Lines = rows.flatMap((row, i) => (isV1(row) ? [] : [`line ${i + 2}`]));
    expect(v2Lines).toHaveLength(2);

    const result = await submit(exported, { v1: true });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toEqual([
      `submit: ${exported}: 2 records hold v2 data that --v1 would not send (the v1 route ignores it, and erases the v2 values of a report it replaces); nothing was sent`,
      ...v2Lines.map((line) => `${line}: type 'project' is a v2 field`),
      "Submit v2 records without --v1. A mixed export: split it by its type column (empty type = v1) and submit the v1 rows with --v1, the others without.",
      "",
    ]);
    expect(await listing()).toEqual(before);
  });

  it("sends the export back unchanged once split by its type column, v1 rows with --v1", async () => {
    const before = await listing();
    const { header, rows, isV1 } = exportedLines();
    const write = (name: string, part: string[]) => {
      const file = join(dir, name);
      writeFileSync(file, `${[header, ...part].join("\r\n")}\r\n`);
      return file;
    };
    const v1 = await submit(write("v1.csv", rows.filter(isV1)), { v1: true });
    expect(v1).toMatchObject({ code: 0, stdout: "created 0, updated 3, rejected 0\n" });
    const v2 = await submit(
      write(
        "v2.csv",
        rows.filter((row) => !isV1(row)),
      ),
    );
    expect(v2).toMatchObject({ code: 0, stdout: "created 0, updated 2, rejected 0\n" });
    expect(await listing()).toEqual(before);
  });

  it("refuses an instrumentType that v1 would not give the record, or has not", async () => {
    const before = await listing();
    const records = [
      v1Record({ date: "2025-02-02", exchangeId: "bybit", instrumentType: "perp", type: null }),
      v1Record({ exchangeId: "binance_futures", instrumentType: "spot" }),
      v1Record({ instrumentType: "future" }),
      v1Record({ date: "2025-02-01", instrumentType: "spot", type: "" }),
      v2Record({ date: "2025-02-04", type: null }),
    ];
    const file = join(dir, "typed.json");
    writeFileSync(file, JSON.stringify(records));
    const result = await submit(file, { v1: true });
    expect(result.code).toBe(2);
    expect(result.stderr.split("\n").slice(1, -2)).toEqual([
      "record 3: instrumentType 'future' is neither spot nor perp",
      "record 5: bidDepthTob 1000 is a v2 field",
    ]);

    const typesOnly = join(dir, "types.json");
    writeFileSync(typesOnly, JSON.stringify(records.slice(0, 2)));
    const types = await submit(typesOnly, { v1: true });
    expect(types.code).toBe(2);
    expect(types.stderr.split("\n").slice(1, -2)).toEqual([
      "record 1: instrumentType 'perp', but v1 files a record of exchange 'bybit' as spot",
      "record 2: instrumentType 'spot', but v1 files a record of exchange 'binance_futures' as perp",
    ]);
    expect(await listing()).toEqual(before);
  });

  it("exits 1, sending nothing, when the exchanges cannot be read to check instrument types", async () => {
    const result = await submit(exported, { v1: true, key: "not-a-key-0123456789abcdef0123456" });
    expect(result.code).toBe(2);
    const { header, rows, isV1 } = exportedLines();
    const file = join(dir, "v1-only.csv");
    writeFileSync(file, `${[header, ...rows.filter(isV1)].join("\r\n")}\r\n`);
    const refused = await submit(file, { v1: true, key: "not-a-key-0123456789abcdef0123456" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "submit: cannot read the service's exchanges to check the records' instrumentType against v1 (answer 401); nothing was sent\n",
    );
  });
});

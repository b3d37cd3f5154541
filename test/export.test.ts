import { execFileSync, spawn } from "node:child_process";
import {
  createReadStream,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExport } from "../src/cli/export.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { SERVICE_ENTRY } from "./helpers/build-service.js";
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

/** The app on a loopback port (listening once for the whole file). */
async function listening(): Promise<number> {
  if (!t.app.server.listening) await t.app.listen({ host: "127.0.0.1", port: 0 });
  const address = t.app.server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

function collect(stream: PassThrough): () => string {
  let text = "";
  stream.on("data", (chunk) => {
    text += chunk;
  });
  return () => text;
}

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
    // instrumentType (before type, as in a v2 record) so that the file can be submitted again.
    expect(rows[0]).toContain(",instrumentType,type,");
    expect(rows).toHaveLength(COUNT + 1);
    const json = (
      await t.request({ method: "GET", url: "/api/v1/reports?pageSize=3", key: KEYS.acme })
    ).json();
    expect(rows[1]?.startsWith(`${json.items[0].date},${json.items[0].exchangeId},`)).toBe(true);
    // The JSON listing keeps the specification's fields only.
    expect(json.items[0]).not.toHaveProperty("instrumentType");
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
      instrumentType: "spot",
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
    const port = await listening();
    const dir = mkdtempSync(join(tmpdir(), "export-"));
    try {
      const out = join(dir, "reports.csv");
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
      const stderr = collect(io.stderr);
      const stdout = collect(io.stdout);
      const code = await runExport(
        { url: `http://127.0.0.1:${port}`, key: KEYS.acme, out, exchangeId: "binance" },
        io,
      );
      expect(code).toBe(0);
      expect(csvRows(readFileSync(out, "utf8"))).toHaveLength(ON_BINANCE + 1);
      expect(stderr()).toBe(`exported ${ON_BINANCE} reports to ${out}\n`);
      expect(stdout()).toBe("");
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

  it("leaves no file cut short when the connection is lost halfway, and says so", async () => {
    // A service that sends the header and two rows, then drops the connection.
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/csv; charset=utf-8" });
      response.write("date,exchangeId\r\n2025-01-01,binance\r\n2025-01-02,binance\r\n");
      setTimeout(() => response.socket?.destroy(), 20);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const dir = mkdtempSync(join(tmpdir(), "export-cut-"));
    try {
      const { port } = server.address() as AddressInfo;
      const out = join(dir, "reports.csv");
      writeFileSync(out, "an earlier export\n");
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
      const stderr = collect(io.stderr);
      const code = await runExport({ url: `http://127.0.0.1:${port}`, key: KEYS.acme, out }, io);
      expect(code).toBe(1);
      expect(stderr()).toMatch(
        new RegExp(
          `^error: the export was cut short after 2 reports \\(.+\\); ${out} was not written: export again\n$`,
        ),
      );
      expect(readFileSync(out, "utf8")).toBe("an earlier export\n");
      expect(readdirSync(dir)).toEqual(["reports.csv"]);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes into the file a symlink names, keeps its mode, and refuses a directory before asking", async () => {
    const port = await listening();
    const dir = mkdtempSync(join(tmpdir(), "export-dest-"));
    try {
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
      const stderr = collect(io.stderr);
      const target = join(dir, "target.csv");
      writeFileSync(target, "old\n", { mode: 0o600 });
      symlinkSync(target, join(dir, "link.csv"));
      const options = { url: `http://127.0.0.1:${port}`, key: KEYS.acme, exchangeId: "kraken" };
      expect(await runExport({ ...options, out: join(dir, "link.csv") }, io)).toBe(0);
      expect(lstatSync(join(dir, "link.csv")).isSymbolicLink()).toBe(true);
      expect(csvRows(readFileSync(target, "utf8"))).toHaveLength(2);
      expect(statSync(target).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir).sort()).toEqual(["link.csv", "target.csv"]);
      expect(await runExport({ ...options, out: dir }, io)).toBe(2);
      expect(await runExport({ ...options, out: join(dir, "none", "x.csv") }, io)).toBe(2);
      expect(stderr()).toContain(`error: --out ${dir}: is a directory\n`);
      expect(stderr()).toContain(
        `error: --out ${join(dir, "none", "x.csv")}: its directory does not exist\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes straight into a pipe (or a symlink to one) and leaves it a pipe", async () => {
    const port = await listening();
    const dir = mkdtempSync(join(tmpdir(), "export-fifo-"));
    try {
      const fifo = join(dir, "reports.fifo");
      execFileSync("mkfifo", [fifo]);
      symlinkSync(fifo, join(dir, "link"));
      symlinkSync(join(dir, "missing.csv"), join(dir, "dangling"));
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
      const stderr = collect(io.stderr);
      const options = { url: `http://127.0.0.1:${port}`, key: KEYS.acme, exchangeId: "kraken" };
      for (const out of [fifo, join(dir, "link")]) {
        const read = new Promise<string>((resolve, reject) => {
          let text = "";
          createReadStream(fifo, "utf8")
            .on("data", (chunk) => {
              text += chunk;
            })
            .on("end", () => resolve(text))
            .on("error", reject);
        });
        expect(await runExport({ ...options, out }, io)).toBe(0);
        expect(csvRows(await read)).toHaveLength(2);
        expect(lstatSync(fifo).isFIFO()).toBe(true);
      }
      expect(await runExport({ ...options, out: join(dir, "dangling") }, io)).toBe(2);
      expect(stderr()).toContain(
        `error: --out ${join(dir, "dangling")}: is a symbolic link to nothing\n`,
      );
      expect(readdirSync(dir).sort()).toEqual(["dangling", "link", "reports.fifo"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says after how many reports Ctrl-C stopped it, and leaves the earlier file", async () => {
    // A service that sends the header and two rows, then nothing more.
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/csv; charset=utf-8" });
      response.write("date,exchangeId\r\n2025-01-01,binance\r\n2025-01-02,binance\r\n");
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const dir = mkdtempSync(join(tmpdir(), "export-interrupted-"));
    try {
      const { port } = server.address() as AddressInfo;
      const out = join(dir, "reports.csv");
      writeFileSync(out, "an earlier export\n");
      const child = spawn(
        process.execPath,
        [
          SERVICE_ENTRY,
          "export",
          "--url",
          `http://127.0.0.1:${port}`,
          "--key",
          KEYS.acme,
          "--out",
          out,
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
      // Once the partial file holds the two rows, the command is waiting for more.
      const partialHoldsRows = () =>
        readdirSync(dir).some(
          (name) =>
            name.includes(".partial-") && readFileSync(join(dir, name), "utf8").includes("01-02"),
        );
      while (!partialHoldsRows()) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      expect(stderr).toBe(
        `error: interrupted after 2 reports; ${out} was not written: export again\n`,
      );
      expect(readFileSync(out, "utf8")).toBe("an earlier export\n");
      expect(readdirSync(dir)).toEqual(["reports.csv"]);
    } finally {
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the option of a filter the service refuses, as bad usage (exit 2)", async () => {
    const port = await listening();
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
    const stderr = collect(io.stderr);
    const code = await runExport(
      { url: `http://127.0.0.1:${port}`, key: KEYS.acme, out: "-", dateGte: "2020-13-01" },
      io,
    );
    expect(code).toBe(2);
    expect(stderr()).toBe("error: --date-gte: Invalid date, expected YYYY-MM-DD\n");
  });

  it("writes the CSV to stdout with --out -, the count on stderr", async () => {
    const port = await listening();
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
    const [stdout, stderr] = [collect(io.stdout), collect(io.stderr)];
    const code = await runExport(
      { url: `http://127.0.0.1:${port}`, key: KEYS.acme, out: "-", exchangeId: "kraken" },
      io,
    );
    expect(code).toBe(0);
    expect(csvRows(stdout())).toHaveLength(2);
    expect(stderr()).toBe("exported 1 report to stdout\n");
  });
});

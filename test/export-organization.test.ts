import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerExportCommand } from "../src/cli/export.js";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";

let t: TestApp;
let url: string;
let dir: string;

beforeAll(async () => {
  t = await startTestApp({ fixture: accountabilityFixture() });
  for (const [key, dates] of [
    [KEYS.acme, ["2025-03-01", "2025-03-02"]],
    [KEYS.globex, ["2025-03-03"]],
  ] as const) {
    const data = dates.map((date) => v2Record({ date }));
    const r = await t.request({ method: "POST", url: "/api/v2/report", key, payload: { data } });
    expect(r.statusCode).toBe(201);
  }
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const address = t.app.server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  dir = mkdtempSync(join(tmpdir(), "export-organization-"));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `trading-reports export … --organization-id ID`, through its command line; the CSV's rows. */
async function exportRows(key: string, organizationId: string) {
  const out = join(dir, `${organizationId}.csv`);
  const program = new Command().exitOverride();
  const exit = { code: -1 };
  const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
  registerExportCommand(program, io, exit);
  const args = ["export", "--url", url, "--key", key, "--out", out];
  await program.parseAsync([...args, "--organization-id", organizationId], { from: "user" });
  expect(exit.code).toBe(0);
  const [header = "", ...rows] = readFileSync(out, "utf8").trimEnd().split("\r\n");
  const column = header.split(",").indexOf("organizationId");
  return rows.map((row) => row.split(",")[column]);
}

describe("export --organization-id", () => {
  it("exports one market maker's reports for an operator or project key", async () => {
    expect(await exportRows(READER_KEYS.operator, "acme")).toEqual(["acme", "acme"]);
    expect(await exportRows(READER_KEYS.chainlinkLabs, "globex")).toEqual(["globex"]);
    expect(await exportRows(READER_KEYS.operator, "nobody")).toEqual([]);
  });

  it("is ignored for a market maker's key, which exports its own reports", async () => {
    const rows = await exportRows(KEYS.acme, "globex");
    expect(rows).toHaveLength(2);
  });
});

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * The examples a market maker copies (examples/), run as they would run them against a test
 * service on a loopback port. In front of it, a proxy answers a submission with the 429 and
 * 503 of a busy service (Retry-After: 1) before letting it through, so that each example's
 * retrying is exercised too.
 */

const ROOT = new URL("../", import.meta.url).pathname;
const run = promisify(execFile);
type Records = { data: Record<string, unknown>[] };
const EXAMPLE = JSON.parse(readFileSync(join(ROOT, "examples/reports.json"), "utf8")) as Records;

let t: TestApp;
let front: BusyFront;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  front = await busyFront((t.app.server.address() as AddressInfo).port);
  dir = mkdtempSync(join(tmpdir(), "examples-"));
});
afterAll(async () => {
  await new Promise((done) => front?.server.close(done));
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The example's records moved to `month` of 2026, so that each example stores its own. */
function recordsIn(month: string, change: (record: Record<string, unknown>) => void = () => {}) {
  const data = EXAMPLE.data.map((record) => {
    const moved = { ...record, date: String(record.date).replace("2026-08", `2026-${month}`) };
    change(moved);
    return moved;
  });
  const file = join(dir, `reports-${month}.json`);
  writeFileSync(file, JSON.stringify({ data }, null, 2));
  return { file, data };
}

async function example(command: string, args: string[]) {
  const env = {
    ...process.env,
    TRADING_REPORTS_URL: front.url,
    TRADING_REPORTS_API_KEY: KEYS.acme,
  };
  try {
    const { stdout, stderr } = await run(command, args, { cwd: ROOT, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The acme reports stored in `month` of 2026, as the listing gives them. */
async function storedIn(month: string) {
  const response = await t.request({
    method: "GET",
    url: `/api/v1/reports?dateGte=2026-${month}-01&dateLte=2026-${month}-28`,
    key: KEYS.acme,
  });
  return response.json().items as Record<string, unknown>[];
}

const key = (r: Record<string, unknown>) => `${r.date} ${r.exchangeId} ${r.bidDepth50}`;
const keys = (records: Record<string, unknown>[]) => records.map(key).sort();

const TSX = [process.execPath, ["--import", "tsx", "examples/submit.ts"]] as const;
const PYTHON = ["python3", ["examples/submit.py"]] as const;

describe("examples/ against a test service", () => {
  it("curl.sh dry-runs, submits its reports.json (through a 429 and a 503) and lists them", async () => {
    front.busy.push(429, 503);
    const result = await example("bash", ["examples/curl.sh"]);
    expect(result.stderr).not.toMatch(/HTTP \d+: nothing stored/);
    expect(result.code).toBe(0);
    expect(front.busy).toEqual([]);
    expect(result.stdout).toContain('{"createdCount":6,"updatedCount":0}');
    expect(result.stdout).toMatch(/^date,exchangeId,/m);
    expect(keys(await storedIn("08"))).toEqual(keys(EXAMPLE.data));
  });

  for (const [name, [command, args], month, badMonth] of [
    ["submit.py", PYTHON, "09", "05"],
    ["submit.ts", TSX, "10", "06"],
  ] as const) {
    it(`${name} submits in batches after a dry run, retrying a 429 and a 503`, async () => {
      const { file, data } = recordsIn(month);
      front.busy.push(429, 503);
      const result = await example(command, [...args, file, "--batch-size", "4"]);
      expect(result.code).toBe(0);
      expect(front.busy).toEqual([]);
      expect(result.stderr).toContain("HTTP 429; retrying in 1 s");
      expect(result.stderr).toContain("HTTP 503; retrying in 1 s");
      expect(result.stdout).toBe("created 6, updated 0 (6 records, 2 batches)\n");
      expect(keys(await storedIn(month))).toEqual(keys(data));
    });

    it(`${name} prints every problem with its path in the file and stores nothing`, async () => {
      // The third day's records (the file's 5th and 6th, in the second batch) are wrong.
      const { file } = recordsIn(badMonth, (record) => {
        if (String(record.date).endsWith("-03")) record.bidDepth50 = "lots";
      });
      const result = await example(command, [...args, file, "--batch-size", "4"]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe(
        "data.4.bidDepth50: Expected number, received string\n" +
          "data.5.bidDepth50: Expected number, received string\n",
      );
      expect(result.stderr).toContain("2 problem(s); nothing stored");
      expect(await storedIn(badMonth)).toEqual([]);
    });
  }
});

type BusyFront = { server: Server; url: string; busy: number[] };

/** A proxy to the service that answers submissions with the statuses in `busy` first. */
async function busyFront(port: number): Promise<BusyFront> {
  const busy: number[] = [];
  const server = createServer((request, response) => {
    const status = request.method === "POST" ? busy.shift() : undefined;
    if (status !== undefined) {
      request.resume();
      const error = status === 429 ? "Too Many Requests" : "Service Unavailable";
      response.writeHead(status, { "content-type": "application/json", "retry-after": "1" });
      response.end(JSON.stringify({ statusCode: status, error, message: "busy; retry later" }));
      return;
    }
    const upstream = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port: own } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${own}`, busy };
}

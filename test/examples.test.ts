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
 * service on a loopback port. In front of it, a proxy answers submissions with what `busy`
 * lists first (a 429 or 503 of a busy service with Retry-After: 1, another status, a dropped
 * connection, "lose" to let one through and drop the connection instead of its answer, or
 * "pass" to let one through) and records every submission's `x-dry-run` and
 * `Idempotency-Key`, so that each example's retrying, and the key it retries with, is checked.
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

async function example(command: string, args: string[], url = front.url) {
  const env = {
    ...process.env,
    TRADING_REPORTS_URL: url,
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
/** The Idempotency-Keys of the real (not dry-run) submissions the front saw, in order. */
const storeKeys = () => front.posts.filter((p) => p.dryRun === "false").map((p) => p.key);
const PYTHON = ["python3", ["examples/submit.py"]] as const;

describe("examples/ against a test service", () => {
  it("curl.sh dry-runs, submits its reports.json (through a 429, a 503 and a dropped connection, with one Idempotency-Key) and lists them", async () => {
    front.posts.length = 0;
    front.busy.push(429, "pass", 503, "drop");
    const result = await example("bash", ["examples/curl.sh"]);
    expect(result.stderr).not.toMatch(/HTTP \d+: nothing stored/);
    expect(result.code).toBe(0);
    expect(front.busy).toEqual([]);
    const [stored, ...retries] = storeKeys();
    expect(stored).toMatch(/^[!-~]{1,255}$/);
    expect(retries).toEqual([stored, stored]);
    expect(front.posts.filter((p) => p.dryRun === "true")).toHaveLength(2);
    expect(result.stderr).toContain("may or may not be stored");
    expect(result.stdout).toContain('{"createdCount":6,"updatedCount":0}');
    expect(result.stdout).toMatch(/^date,exchangeId,/m);
    expect(keys(await storedIn("08"))).toEqual(keys(EXAMPLE.data));
  });

  for (const [name, [command, args], month, badMonth, cutMonth, rerunMonth] of [
    ["submit.py", PYTHON, "09", "05", "03", "01"],
    ["submit.ts", TSX, "10", "06", "04", "02"],
  ] as const) {
    it(`${name} submits in batches after a dry run, retrying a 429, a 503 and a dropped connection with the batch's Idempotency-Key`, async () => {
      const { file, data } = recordsIn(month);
      front.posts.length = 0;
      // The first dry run is answered 429; the first batch 503, then its connection is dropped.
      front.busy.push(429, "pass", "pass", 503, "drop");
      const result = await example(command, [...args, file, "--batch-size", "4"]);
      expect(result.code).toBe(0);
      expect(front.busy).toEqual([]);
      expect(result.stderr).toContain("HTTP 429; retrying in 1 s");
      expect(result.stderr).toContain("HTTP 503; retrying in 1 s");
      expect(result.stderr).toContain("may or may not be stored");
      expect(result.stdout).toBe("created 6, updated 0 (6 records, 2 batches)\n");
      expect(keys(await storedIn(month))).toEqual(keys(data));
      const [first, retry, again, second] = storeKeys();
      expect(first).toMatch(/^[!-~]{1,255}$/);
      expect([retry, again]).toEqual([first, first]);
      expect(second).toMatch(/^[!-~]{1,255}$/);
      expect(second).not.toBe(first);
    });

    it(`${name} says batches an earlier run stored (answers replayed) changed nothing, and counts its own lost answer's as its own`, async () => {
      const { file, data } = recordsIn(rerunMonth);
      // Two dry runs; the first batch is stored but its answer lost: the retry gets it replayed.
      front.busy.push("pass", "pass", "lose");
      const first = await example(command, [...args, file, "--batch-size", "4"]);
      expect(first.code, first.stderr).toBe(0);
      expect(front.busy).toEqual([]);
      expect(first.stdout).toBe("created 6, updated 0 (6 records, 2 batches)\n");
      const again = await example(command, [...args, file, "--batch-size", "4"]);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(
        "created 0, updated 0 (6 records, 2 batches); 2 batch(es) (6 records) already stored by an earlier run (answers replayed): nothing changed\n",
      );
      expect(keys(await storedIn(rerunMonth))).toEqual(keys(data));
    });

    it(`${name} does not retry a 422, and says which batches were stored before it`, async () => {
      const { file } = recordsIn(cutMonth);
      front.posts.length = 0;
      front.busy.push("pass", "pass", "pass", 422);
      const result = await example(command, [...args, file, "--batch-size", "4"]);
      expect(result.code).toBe(1);
      expect(front.busy).toEqual([]);
      expect(storeKeys()).toHaveLength(2);
      expect(result.stderr).toContain("HTTP 422");
      expect(result.stderr).toContain("batch 1 (records 0-3) was stored");
      expect(result.stderr).toContain("running this again is safe");
      expect(result.stderr).not.toMatch(/Traceback|at .*\(.*:\d+:\d+\)/);
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

describe("examples/ without a service", () => {
  it("each says that nothing answered, without a stack trace, and exits 1", async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const url = `http://127.0.0.1:${port}`;
    const results = await Promise.all([
      example("bash", ["examples/curl.sh"], url),
      example(PYTHON[0], [...PYTHON[1]], url),
      example(TSX[0], [...TSX[1]], url),
    ]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain("no answer");
      expect(result.stderr).not.toMatch(/Traceback|at .*\(.*:\d+:\d+\)|node:internal/);
    }
  });
});

describe("the README's command for the examples", () => {
  it("runs as written from the repository root, with its file argument", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### Examples and the typed client"));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    const [exported, ...commands] = block.trim().split("\n");
    expect(exported).toMatch(/^export TRADING_REPORTS_URL=\S+ TRADING_REPORTS_API_KEY=</);
    expect(commands).toEqual([
      "bash examples/curl.sh examples/reports.json",
      "python3 examples/submit.py examples/reports.json",
      "npx tsx examples/submit.ts examples/reports.json",
    ]);
    for (const command of commands) {
      const result = await example("bash", ["-ec", command]);
      expect(result.code, `${command}\n${result.stderr}`).toBe(0);
    }
  });
});

type Busy = number | "drop" | "lose" | "pass";
type BusyFront = {
  server: Server;
  url: string;
  busy: Busy[];
  posts: { dryRun: string | undefined; key: string | undefined }[];
};

/** A proxy to the service that answers submissions with what `busy` lists first. */
async function busyFront(port: number): Promise<BusyFront> {
  const busy: Busy[] = [];
  const posts: BusyFront["posts"] = [];
  const server = createServer((request, response) => {
    const header = (name: string) => request.headers[name] as string | undefined;
    if (request.method === "POST")
      posts.push({ dryRun: header("x-dry-run"), key: header("idempotency-key") });
    const status = request.method === "POST" ? busy.shift() : undefined;
    if (status === "drop") {
      // The connection breaks once the request was read: the batch may or may not be stored.
      request.resume();
      request.on("end", () => request.socket.destroy());
      return;
    }
    if (typeof status === "number") {
      request.resume();
      response.writeHead(status, { "content-type": "application/json", "retry-after": "1" });
      response.end(JSON.stringify({ statusCode: status, message: "busy; retry later" }));
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
        if (status === "lose") {
          // Stored, but its answer never reaches the client.
          answer.resume();
          answer.on("end", () => request.socket.destroy());
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port: own } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${own}`, busy, posts };
}

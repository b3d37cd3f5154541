import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_ENTRY } from "./helpers/build-service.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";
import { METRICS_TOKEN, samplesOf } from "./helpers/metrics.js";

const ROOT = new URL("..", import.meta.url).pathname;
// Each command boots Node and an in-memory PGlite: generous bounds for a busy machine.
const WAIT_MS = 90_000;
const SLOW = { timeout: 2 * WAIT_MS };

type Run = {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
};

const spawned: ChildProcess[] = [];
let dir: string;
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "trading-reports-cli-"));
});
afterAll(() => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [SERVICE_ENTRY, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "memory://", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  spawned.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, stdout: () => out, stderr: () => err, exited };
}

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs a command to its end (bounded) and returns its exit code and output. */
async function complete(args: string[], env: Record<string, string> = {}) {
  const run = cli(args, env);
  const code = await within(run.exited, `${args.join(" ")} to exit`);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** Resolves with the first stdout line once one is complete; rejects if the process ends. */
function firstLine(run: Run): Promise<string> {
  return within(
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const end = run.stdout().indexOf("\n");
        if (end >= 0) resolve(run.stdout().slice(0, end));
      };
      run.child.stdout?.on("data", check);
      check();
      run.exited.then((code) => reject(new Error(`exited ${code}: ${run.stderr()}`)));
    }),
    "the first line",
  );
}

describe("trading-reports serve", SLOW, () => {
  it("prints the listening line and where the docs are, answers over HTTP, exits 0 on SIGTERM", async () => {
    const run = cli(["serve", "--port", "0", "--seed", file("seed.json", baseFixture())]);
    const line = await firstLine(run);
    const match = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/.exec(line);
    expect(match, line).not.toBeNull();
    const base = `http://127.0.0.1:${match?.[1]}`;

    const health = await within(fetch(`${base}/healthz`), "/healthz");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const projects = await within(
      fetch(`${base}/api/v1/projects`, { headers: { authorization: KEYS.acme } }),
      "/api/v1/projects",
    );
    expect(projects.status).toBe(200);
    const body = (await projects.json()) as { items: { id: string }[] };
    expect(body.items.map((p) => p.id)).toEqual(["chainlink", "uniswap"]);

    run.child.kill("SIGTERM");
    expect(await within(run.exited, "exit after SIGTERM")).toBe(0);
    expect(run.stdout()).toBe(
      `${line}\nAPI reference: ${base}/docs (OpenAPI document: ${base}/openapi.json)\nDashboard: ${base}/app (sign in with an API key)\n`,
    );
  });

  it("folds a stored batch's month-count delta into the listing's counts while it serves", async () => {
    const run = cli(["serve", "--port", "0", "--seed", file("seed-counts.json", baseFixture())], {
      METRICS_TOKEN,
    });
    const base = /^listening on (http:\/\/[^\s]+)$/.exec(await firstLine(run))?.[1];
    const stored = await fetch(`${base}/api/v2/report`, {
      method: "POST",
      headers: { authorization: KEYS.acme, "content-type": "application/json" },
      body: JSON.stringify({ data: [v2Record({ date: "2025-03-01" })] }),
    });
    expect(await stored.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    // Nothing but serve's compaction job folds the batch's delta row in.
    const pending = async () => {
      const metrics = await fetch(`${base}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      return samplesOf(await metrics.text()).get("trading_reports_month_count_deltas_pending");
    };
    await within(
      (async () => {
        while ((await pending()) !== 0) await new Promise((r) => setTimeout(r, 100));
      })(),
      "the month-count delta to be folded in",
    );
    const listed = await fetch(`${base}/api/v1/reports?pageSize=1`, {
      headers: { authorization: KEYS.acme },
    });
    expect(((await listed.json()) as { totalCount: number }).totalCount).toBe(1);
    run.child.kill("SIGTERM");
    expect(await within(run.exited, "exit after SIGTERM")).toBe(0);
  });

  it("exits 0 without serving on a SIGTERM while it starts, its data directory fit to serve again", async () => {
    const dataDir = join(dir, "stopped-while-starting");
    const starting = cli(["serve", "--port", "0", "--demo"], {
      DATABASE_URL: "",
      DATA_DIR: dataDir,
    });
    // The folder's owner file is written once the stop handlers are in place, before the
    // migrations and the demo load.
    await within(
      (async () => {
        while (!existsSync(join(dataDir, ".owner.json")))
          await new Promise((r) => setTimeout(r, 20));
      })(),
      "the data directory to be taken",
    );
    starting.child.kill("SIGTERM");
    expect(await within(starting.exited, "exit after SIGTERM")).toBe(0);
    expect(starting.stdout()).not.toContain("listening on");

    const again = cli(["serve", "--port", "0", "--demo"], { DATABASE_URL: "", DATA_DIR: dataDir });
    expect(await firstLine(again)).toMatch(/^listening on /);
    again.child.kill("SIGTERM");
    expect(await within(again.exited, "exit after SIGTERM")).toBe(0);
  });

  it("exits 1 with a one-line reason when the port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const result = await complete(["serve", "--port", String(port)]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain("EADDRINUSE");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("logs once that the shared rate-limit store does not answer, and serves on, counting in memory", async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const run = cli(["serve", "--port", "0", "--seed", file("seed-redis.json", baseFixture())], {
      REDIS_URL: "redis://127.0.0.1:1",
    });
    const line = await firstLine(run);
    const base = line.replace("listening on ", "");
    for (let i = 0; i < 3; i++) {
      const answer = await within(
        fetch(`${base}/api/v1/projects`, { headers: { authorization: KEYS.acme } }),
        "/api/v1/projects",
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get("x-ratelimit-remaining")).toBe(String(1200 - i - 1));
    }
    run.child.kill("SIGTERM");
    expect(await within(run.exited, "exit after SIGTERM")).toBe(0);
    const warnings = run
      .stderr()
      .split("\n")
      .filter((l) => l.includes("shared rate-limit store (RATE_LIMIT_STORE) does not answer"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] ?? "{}")).toMatchObject({ level: 40 });
  });

  it("exits 2 for a port that is not a number", async () => {
    const result = await complete(["serve", "--port", "abc"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/port/);
    expect(result.stdout).toBe("");
  });

  it("exits 2 for a port out of range", async () => {
    expect((await complete(["serve", "--port", "70000"])).code).toBe(2);
  });

  it("exits 2 for a port or host that Node would read as another (0x50 is 80, '' is any)", async () => {
    for (const port of ["0x50", "1e3", "", " 80"]) {
      const result = await complete(["serve", "--port", port]);
      expect(result.code, port).toBe(2);
      expect(result.stderr).toContain(`--port must be an integer from 0 to 65535, got '${port}'`);
    }
    const host = await complete(["serve", "--port", "0", "--host", ""]);
    expect(host.code).toBe(2);
    expect(host.stderr).toContain("--host must name an address");
  });

  it("exits 1 with one line on stderr when the seed file is not JSON", async () => {
    const result = await complete(["serve", "--port", "0", "--seed", file("bad.json", "{")]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("trading-reports submit, interrupted", SLOW, () => {
  /** Submits three one-record batches to a service that answers only the first; SIGINT then. */
  async function interruptedRun(more: string[] = []) {
    let requests = 0;
    const service = createHttpServer((request, response) => {
      request.resume();
      request.on("end", () => {
        if (++requests > 1) return;
        response.writeHead(201, { "content-type": "application/json" });
        response.end('{"createdCount":1,"updatedCount":0}');
      });
    });
    await new Promise<void>((done) => service.listen(0, "127.0.0.1", done));
    try {
      const { port } = service.address() as AddressInfo;
      const records = ["2024-01-01", "2024-01-02", "2024-01-03"].map((date) => ({
        date,
        exchangeId: "binance",
        baseCoinId: "bitcoin",
        quoteCoinId: "tether",
      }));
      const args = ["submit", file("three.json", records), "--v1", "--batch-size", "1", ...more];
      const run = cli([...args, "--url", `http://127.0.0.1:${port}`, "--key", "k"]);
      await within(
        new Promise<void>((resolve) => {
          const check = () => (requests >= 2 ? resolve() : setTimeout(check, 20));
          check();
        }),
        "the second batch to be sent",
      );
      run.child.kill("SIGINT");
      const code = await within(run.exited, "exit after SIGINT");
      return { code, stdout: run.stdout(), stderr: run.stderr() };
    } finally {
      service.close();
    }
  }

  it("says on SIGINT what was stored, what may be, and what was not sent; exits 130", async () => {
    const run = await interruptedRun();
    expect(run.code).toBe(130);
    expect(run.stderr).toContain(
      "submit: interrupted; 1 of 3 batch(es) answered, 1 of them stored; batch 2 (record 2) was being sent and may or may not be stored; batch 3 (record 3) not sent; submitting the file again is safe",
    );
  });

  it("with --json, prints a JSON summary saying so on stdout too", async () => {
    const run = await interruptedRun(["--json"]);
    expect(run.code).toBe(130);
    expect(run.stderr).toContain("submit: interrupted; 1 of 3 batch(es) answered");
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      created: 1,
      batches: 3,
      interrupted: { signal: "SIGINT", batchInFlight: 2, batchesNotSent: 1 },
    });
  });
});

describe("trading-reports seed", SLOW, () => {
  it("loads a valid fixture and exits 0", async () => {
    const result = await complete(["seed", file("good.json", baseFixture())]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^loaded .*good\.json/);
  });

  it("exits 1 with a one-line reason naming the entry for a malformed fixture", async () => {
    const fixture = baseFixture();
    const malformed = {
      ...fixture,
      markets: [{ ...fixture.markets[0], exchangeId: "nowhere" }],
    };
    const result = await complete(["seed", file("malformed.json", malformed)]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("markets.0.exchangeId");
  });

  it("exits 1 with one line naming every problem of a fixture that has several", async () => {
    const fixture = baseFixture();
    const malformed = {
      ...fixture,
      markets: [{ ...fixture.markets[0], exchangeId: "nowhere" }],
      extra: true,
    };
    const result = await complete(["seed", file("malformed-twice.json", malformed)]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: 2 problems: .*markets\.0\.exchangeId/);
    expect(lines[0]).toContain('"extra"');
  });

  it("exits 1 with one line for a file that is not JSON", async () => {
    const result = await complete(["seed", file("broken.json", '{"coins": [')]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("exits non-zero with one line for a file that does not exist", async () => {
    const result = await complete(["seed", join(dir, "missing.json")]);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("missing.json");
  });

  it("exits 2 when the file argument is missing", async () => {
    expect((await complete(["seed"])).code).toBe(2);
  });
});

describe("trading-reports usage", SLOW, () => {
  it("exits 2 for an unknown command", async () => {
    const result = await complete(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toBe("");
  });

  it("exits 2 for an unknown option", async () => {
    expect((await complete(["migrate", "--force"])).code).toBe(2);
  });

  it("exits 2 with a one-line reason for an invalid DATABASE_URL", async () => {
    const result = await complete(["migrate"], { DATABASE_URL: "mysql://localhost/x" });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("DATABASE_URL");
  });

  it("exits 1 naming the database it cannot reach and its variable, never the password", async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    for (const args of [["migrate"], ["serve", "--port", "0"]]) {
      const result = await complete(args, {
        DATABASE_URL: "postgres://reporter:s3cret@127.0.0.1:1/reports",
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        "error: cannot reach the database at 127.0.0.1:1/reports (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1\n",
      );
    }
  });

  it("applies migrations with migrate and exits 0", async () => {
    const result = await complete(["migrate"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });
});

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/database.js";
import { DiskNearlyFullError, DiskSpaceGuard, writes } from "../src/store/disk-space.js";
import { migrate } from "../src/store/migrate.js";
import { isDatabaseUnavailable } from "../src/store/unavailable.js";
import { SERVICE_ENTRY } from "./helpers/build-service.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";

/**
 * A full disk under the embedded database (review of the embedded database): PGlite that runs
 * out of space writing its WAL spins for good, so writes are refused below a reserve, and a
 * watchdog ends a process stuck that way. The real disk cannot be filled here; a reserve larger
 * than any disk stands for a full one, and the watchdog is run in a child process of its own.
 */
const MIB = 1024 * 1024;
const LARGER_THAN_ANY_DISK = 2 ** 52;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "trading-reports-disk-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("which statements write", () => {
  it.each([
    ["insert into reports (id) values ($1)", true],
    ["with rows as (select 1) insert into reports select * from rows", true],
    ['update "api_keys" set "last_used_at" = $1', true],
    ["delete from idempotency_keys where expires_at < $1", true],
    ["create table schema_migrations (name text)", true],
    ['select "created_at", "updated_count", "deleted" from reports', false],
    ["select to_regclass('schema_migrations')::text as found", false],
    ["begin", false],
    ["commit", false],
    ["rollback", false],
  ])("%s: %s", (statement, expected) => {
    expect(writes(statement)).toBe(expected);
  });
});

describe("the disk reserve", () => {
  it("refuses writes while less than the reserve is free, says so once each way, and lets reads by", async () => {
    let free = 100 * MIB;
    const changes: [boolean, string][] = [];
    const guard = new DiskSpaceGuard(
      "/data",
      64 * MIB,
      (low, message) => changes.push([low, message]),
      async () => free,
    );
    await guard.check();
    expect(() => guard.admit("insert into reports values (1)")).not.toThrow();
    free = 10 * MIB;
    await guard.check();
    await guard.check();
    const refusal = (() => {
      try {
        guard.admit("insert into reports values (1)");
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(DiskNearlyFullError);
    expect(isDatabaseUnavailable(refusal)).toBe(true); // answered 503 with Retry-After
    expect(() => guard.admit("select 1")).not.toThrow();
    free = 80 * MIB;
    await guard.check();
    expect(() => guard.admit("insert into reports values (1)")).not.toThrow();
    expect(changes).toEqual([
      [
        true,
        "the embedded database's disk is nearly full: 10 MiB free in /data, less than the reserve of 64 MiB (EMBEDDED_DISK_RESERVE_MB); writes are refused (503) until space is freed",
      ],
      [false, "the embedded database's disk has 80 MiB free in /data again; writes are accepted"],
    ]);
  });

  it("keeps an embedded database on a nearly full disk readable: no write reaches PGlite, a start with nothing to migrate passes", async () => {
    const dataDir = join(dir, "reserve");
    const roomy = await openDatabase({ kind: "pglite", dataDir, diskReserveBytes: 0 });
    await migrate(roomy.db);
    await roomy.close();

    const full = await openDatabase({
      kind: "pglite",
      dataDir,
      diskReserveBytes: LARGER_THAN_ANY_DISK,
    });
    try {
      const said: boolean[] = [];
      full.onDiskSpace((low) => said.push(low));
      expect(said).toEqual([true]);
      expect(await migrate(full.db)).toEqual([]);
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from organizations`.execute(full.db);
      expect(rows[0]?.n).toBe(0);
      const insert = sql`insert into organizations (id, name) values ('acme', 'Acme')`.execute(
        full.db,
      );
      await expect(insert).rejects.toBeInstanceOf(DiskNearlyFullError);
      await expect(insert).rejects.toMatchObject({ code: "53100" });
    } finally {
      await full.close();
    }
  });
});

describe("serve on a nearly full disk", () => {
  const ROOT = new URL("..", import.meta.url).pathname;
  const run = (args: string[], reserveMb: string) => {
    const child = spawn(process.execPath, [SERVICE_ENTRY, ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: "",
        DATA_DIR: join(dir, "serve"),
        EMBEDDED_DISK_RESERVE_MB: reserveMb,
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { stdout: "", stderr: "" };
    child.stdout.on("data", (chunk: Buffer) => {
      output.stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output.stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    return { child, output, exited };
  };

  it("starts, serves reads, answers a submission 503 with Retry-After, stores nothing, and logs why", async () => {
    const fixture = join(dir, "fixture.json");
    writeFileSync(fixture, JSON.stringify(baseFixture()));
    expect(await run(["seed", fixture], "0").exited).toBe(0);
    const serve = run(["serve", "--port", "0"], String(2 ** 30));
    try {
      while (!serve.output.stdout.includes("\n")) {
        if (serve.child.exitCode !== null) throw new Error(serve.output.stderr);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const base = serve.output.stdout.split("\n")[0]?.replace("listening on ", "");
      const headers = { authorization: KEYS.acme, "content-type": "application/json" };
      const listed = await fetch(`${base}/api/v1/reports`, { headers });
      expect(listed.status).toBe(200);
      const submitted = await fetch(`${base}/api/v2/report`, {
        method: "POST",
        headers,
        body: JSON.stringify({ data: [v2Record({ date: "2024-05-01" })] }),
      });
      expect(submitted.status).toBe(503);
      expect(submitted.headers.get("retry-after")).toBe("5");
      const after = await fetch(`${base}/api/v1/reports`, { headers });
      expect(((await after.json()) as { totalCount: number }).totalCount).toBe(0);
      expect(serve.output.stderr).toContain("the embedded database's disk is nearly full");
    } finally {
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
    }
  }, 60_000);
});

describe("the watchdog", () => {
  /** Runs the watchdog in a child whose thread then blocks for `blockMs`; its end and stderr. */
  function blockedChild(fullBelowBytes: number, blockMs: number) {
    const script = `
      import { startDiskWatchdog } from "./src/store/disk-watchdog.ts";
      startDiskWatchdog({ path: ${JSON.stringify(dir)}, stallMs: 1500, fullBelowBytes: ${fullBelowBytes} });
      setTimeout(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${blockMs}), 700);
    `;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        cwd: new URL("..", import.meta.url).pathname,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    return new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
      child.once("close", (code, signal) => resolve({ code, signal, stderr })),
    );
  }

  it("ends a process whose thread stays silent while its disk is full, saying why", async () => {
    const ended = await blockedChild(LARGER_THAN_ANY_DISK, 60_000);
    expect(ended.signal).toBe("SIGKILL");
    const line = JSON.parse(ended.stderr.trim().split("\n").at(-1) ?? "{}");
    expect(line).toMatchObject({ level: 60 });
    expect(line.msg).toMatch(
      /^the embedded database has not answered for \d+ s since its disk was full/,
    );
  }, 30_000);

  it("leaves a process whose thread is busy as long on a disk with room", async () => {
    const ended = await blockedChild(0, 4_000);
    expect(ended).toMatchObject({ code: 0, signal: null });
  }, 30_000);
});

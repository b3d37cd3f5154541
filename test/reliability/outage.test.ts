import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseFixture, KEYS, v2Record } from "../helpers/fixture.js";
import {
  call,
  type Reply,
  type Server,
  sleep,
  startServer,
  stopAllServers,
  stopServer,
  writeSeed,
} from "./support.js";

/**
 * Hardening item 4: the database goes away under a running service. A private PostgreSQL
 * cluster (never the machine's main one) is started for this file, stopped with
 * `pg_ctl stop -m immediate`, frozen with SIGSTOP, and brought back; the same server process
 * must answer 503 + Retry-After within its timeouts meanwhile and recover by itself.
 */

const CONNECT_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 2_000;
/** Every answer during an outage must come within this (timeouts plus slack for a busy box). */
const ANSWER_WITHIN_MS = 5_000;
/** The service must be ready again this soon after PostgreSQL is. */
const RECOVER_WITHIN_MS = 15_000;

const execFileAsync = promisify(execFile);

/** The directory with initdb and pg_ctl: PG_BIN, else the newest /usr/lib/postgresql/N/bin. */
function findPgBin(): string | undefined {
  const candidates = [process.env.PG_BIN];
  if (existsSync("/usr/lib/postgresql")) {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  }
  return candidates.find(
    (dir) =>
      dir !== undefined && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")),
  );
}

const isRoot = process.getuid?.() === 0;

/** initdb refuses to run as root: as root, the cluster runs as the `postgres` OS user. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (!isRoot) return undefined;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

const pgBin = findPgBin();
const owner = clusterOwner();
const skipReason =
  pgBin === undefined
    ? "no PostgreSQL binaries (initdb, pg_ctl) found; set PG_BIN to their directory"
    : isRoot && owner === undefined
      ? "running as root and there is no `postgres` OS user to run initdb as"
      : undefined;
if (skipReason !== undefined) console.warn(`[outage] skipped: ${skipReason}`);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/** A throw-away PostgreSQL cluster of this test's own: its own directory, port and socket. */
class PrivateCluster {
  readonly dataDir: string;
  private frozen: number[] = [];
  running = false;

  constructor(
    private readonly bin: string,
    readonly dir: string,
    readonly port: number,
  ) {
    this.dataDir = join(dir, "data");
  }

  get url() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async tool(name: string, args: string[], timeoutMs: number): Promise<string> {
    const path = join(this.bin, name);
    const [file, argv] = isRoot
      ? ["runuser", ["-u", "postgres", "--", path, ...args]]
      : [path, args];
    const { stdout } = await execFileAsync(file, argv, { timeout: timeoutMs, cwd: this.dir });
    return stdout;
  }

  async init() {
    await this.tool(
      "initdb",
      ["-D", this.dataDir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"],
      120_000,
    );
  }

  async start() {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`;
    const log = join(this.dir, "postgres.log");
    await this.tool(
      "pg_ctl",
      ["-D", this.dataDir, "-o", options, "-l", log, "-w", "-t", "60", "start"],
      90_000,
    );
    this.running = true;
  }

  async stopImmediately() {
    await this.tool(
      "pg_ctl",
      ["-D", this.dataDir, "-m", "immediate", "-w", "-t", "60", "stop"],
      90_000,
    );
    this.running = false;
  }

  /** The postmaster and all its children, by pid. */
  private pids(): number[] {
    const postmaster = Number(
      readFileSync(join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0],
    );
    const children = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces, so cut after ')'.
          const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
          return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster;
        } catch {
          return false; // ended meanwhile
        }
      })
      .map(Number);
    return [postmaster, ...children];
  }

  /** SIGSTOP on every process of the cluster: connections accept, nothing answers. */
  freeze() {
    this.frozen = this.pids();
    for (const pid of this.frozen) process.kill(pid, "SIGSTOP");
  }

  thaw() {
    for (const pid of this.frozen) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // already gone
      }
    }
    this.frozen = [];
  }

  async destroy() {
    this.thaw();
    if (this.running) await this.stopImmediately().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The specified 5xx body (CONTRACT section 2) and a Retry-After in whole seconds. */
function expectUnavailable(reply: Reply, what: string) {
  expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).toBe(503);
  const body = reply.body as Record<string, unknown>;
  expect(Object.keys(body).sort(), what).toEqual(["error", "message", "statusCode"]);
  expect(body.statusCode).toBe(503);
  expect(body.error).toBe("Service Unavailable");
  expect(typeof body.message).toBe("string");
  expect(reply.headers.get("retry-after"), `${what}: Retry-After`).toMatch(/^[1-9]\d*$/);
  expect(reply.ms, `${what}: answered in ${Math.round(reply.ms)} ms`).toBeLessThan(
    ANSWER_WITHIN_MS,
  );
}

/** Polls /readyz until 200; returns the milliseconds it took (fails past the bound). */
async function readyAgain(server: Server): Promise<number> {
  const startedAt = performance.now();
  while (performance.now() - startedAt < RECOVER_WITHIN_MS) {
    const reply = await call(server.base, "/readyz", { timeoutMs: ANSWER_WITHIN_MS }).catch(
      () => undefined,
    );
    if (reply?.status === 200) return performance.now() - startedAt;
    await sleep(250);
  }
  throw new Error(`/readyz not 200 within ${RECOVER_WITHIN_MS} ms after PostgreSQL returned`);
}

let batchDay = 0;
/** A small valid batch on a date of its own. */
function batch() {
  batchDay++;
  const date = new Date(Date.UTC(2024, 0, 1 + batchDay)).toISOString().slice(0, 10);
  return { date, data: [v2Record({ date }), v2Record({ date, exchangeId: "kraken" })] };
}

/** The probes of an outage, all at once: every one must be a quick, well-formed 503. */
async function probeOutage(server: Server, figures: { probes: number }) {
  const [ready, submit, list, health] = await Promise.all([
    // /readyz reuses one ping's answer for a second (a flood costs one ping a second), and the
    // tests asked it just before the fault: ask past that second.
    new Promise((resolve) => setTimeout(resolve, 1_100)).then(() =>
      call(server.base, "/readyz", { timeoutMs: 30_000 }),
    ),
    call(server.base, "/api/v2/report", {
      key: KEYS.acme,
      body: { data: batch().data },
      timeoutMs: 30_000,
    }),
    call(server.base, "/api/v1/reports", { key: KEYS.acme, timeoutMs: 30_000 }),
    call(server.base, "/healthz", { timeoutMs: 30_000 }),
  ]);
  figures.probes += 4;
  expectUnavailable(ready, "GET /readyz");
  expectUnavailable(submit, "POST /api/v2/report");
  expectUnavailable(list, "GET /api/v1/reports");
  expect(health.status).toBe(200);
  expect(health.body).toEqual({ status: "ok" });
  return Math.max(ready.ms, submit.ms, list.ms);
}

describe.skipIf(skipReason !== undefined)("PostgreSQL outage under a running service", () => {
  let cluster: PrivateCluster | undefined;
  let server: Server;
  let workDir: string;
  const figures = { probes: 0, faults: 0, background: new Map<string, number>() };

  beforeAll(async () => {
    if (pgBin === undefined) return;
    workDir = mkdtempSync(join(tmpdir(), "tr-outage-"));
    const clusterDir = mkdtempSync(join(tmpdir(), "tr-outage-pg-"));
    if (owner !== undefined) chownSync(clusterDir, owner.uid, owner.gid);
    cluster = new PrivateCluster(pgBin, clusterDir, await freePort());
    await cluster.init();
    await cluster.start();
    server = await startServer({
      seedFile: writeSeed(workDir, baseFixture()),
      env: {
        DATABASE_URL: cluster.url,
        DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      },
    });
  }, 240_000);

  afterAll(async () => {
    if (server !== undefined && !server.alive())
      console.log(`[outage] the server process ended; its stderr:\n${server.stderr()}`);
    if (server !== undefined) await stopServer(server);
    await stopAllServers();
    await cluster?.destroy();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
    const background = JSON.stringify(Object.fromEntries(figures.background));
    console.log(
      `[outage] ${figures.faults} faults injected (stop -m immediate, SIGSTOP); ` +
        `${figures.probes} probe requests; background requests by status ${background}`,
    );
  }, 120_000);

  it("stop -m immediate: 503 + Retry-After at once, /healthz 200, ready again without a restart", async () => {
    const live = cluster as PrivateCluster;
    const pid = server.pid;
    const ready = await call(server.base, "/readyz");
    expect(ready.status).toBe(200);
    const before = batch();
    const first = await call(server.base, "/api/v2/report", {
      key: KEYS.acme,
      body: { data: before.data },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);

    // Clients keep submitting and listing through the whole outage: each gets an answer (201,
    // 200 or 503, never a 500 and never silence) within the bound.
    let stopped = false;
    const slow: string[] = [];
    const background = async () => {
      for (let i = 0; !stopped && i < 10_000; i++) {
        const request =
          i % 2 === 0
            ? call(server.base, "/api/v2/report", {
                key: KEYS.acme,
                body: { data: batch().data },
                timeoutMs: 30_000,
              })
            : call(server.base, "/api/v1/reports?pageSize=5", {
                key: KEYS.acme,
                timeoutMs: 30_000,
              });
        const reply = await request.catch((error: unknown) => ({
          status: 0,
          ms: 0,
          body: String(error),
        }));
        const label = String(reply.status);
        figures.background.set(label, (figures.background.get(label) ?? 0) + 1);
        if (reply.ms > ANSWER_WITHIN_MS) slow.push(`${reply.status} in ${Math.round(reply.ms)} ms`);
        await sleep(50);
      }
    };
    const clients = Promise.all([background(), background()]);

    await sleep(300);
    await live.stopImmediately();
    figures.faults++;
    let slowest = 0;
    for (let i = 0; i < 3; i++) {
      slowest = Math.max(slowest, await probeOutage(server, figures));
      await sleep(300);
    }

    await live.start();
    const recoveredMs = await readyAgain(server);
    console.log(
      `[outage] stop -m immediate: slowest 503 ${Math.round(slowest)} ms; /readyz 200 again ` +
        `${Math.round(recoveredMs)} ms after PostgreSQL was back`,
    );
    const after = batch();
    const second = await call(server.base, "/api/v2/report", {
      key: KEYS.acme,
      body: { data: after.data },
    });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    stopped = true;
    await clients;

    expect(server.pid).toBe(pid);
    expect(server.alive()).toBe(true);
    const statuses = [...figures.background.keys()].sort();
    expect(statuses.filter((s) => !["200", "201", "503"].includes(s))).toEqual([]);
    expect(slow).toEqual([]);
    const listed = await call(
      server.base,
      `/api/v1/reports?dateGte=${before.date}&dateLte=${after.date}&pageSize=500`,
      {
        key: KEYS.acme,
      },
    );
    expect(listed.status).toBe(200);
    const dates = new Set((listed.body as { items: { date: string }[] }).items.map((i) => i.date));
    expect(dates.has(before.date) && dates.has(after.date)).toBe(true);
  }, 120_000);

  it("PostgreSQL frozen (SIGSTOP): 503 within the timeouts, ready again after SIGCONT", async () => {
    const live = cluster as PrivateCluster;
    const pid = server.pid;
    // Warm connections in the pool: they will hang on the frozen server (statement timeout
    // path); new connections hang in the handshake (connect timeout path).
    for (let i = 0; i < 4; i++) expect((await call(server.base, "/readyz")).status).toBe(200);
    live.freeze();
    figures.faults++;
    let slowest = 0;
    try {
      for (let i = 0; i < 2; i++) slowest = Math.max(slowest, await probeOutage(server, figures));
    } finally {
      live.thaw();
    }
    const recoveredMs = await readyAgain(server);
    console.log(
      `[outage] SIGSTOP: slowest 503 ${Math.round(slowest)} ms; /readyz 200 again ` +
        `${Math.round(recoveredMs)} ms after SIGCONT`,
    );
    const reply = await call(server.base, "/api/v2/report", {
      key: KEYS.acme,
      body: { data: batch().data },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(server.pid).toBe(pid);
    expect(server.alive()).toBe(true);
  }, 120_000);
});

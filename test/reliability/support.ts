import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Fixture } from "../../src/schemas/fixture.js";
import { SERVICE_ENTRY } from "../helpers/build-service.js";

/**
 * Shared by the reliability tests: real `trading-reports serve` processes (spawned the way an
 * operator starts them), HTTP clients over Node's fetch with a deadline on every request, and
 * throw-away PostgreSQL databases. Every wait here is bounded.
 */

export const ROOT = new URL("../..", import.meta.url).pathname;
/** Booting Node and a database takes seconds, more on a busy two-core machine. */
export const START_TIMEOUT_MS = 90_000;

export type Server = {
  child: ChildProcess;
  pid: number;
  base: string;
  stderr(): string;
  /** Resolves when the process has ended, with its exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
};

const started = new Set<ChildProcess>();

/**
 * Spawns `node .test-build/main.js serve --host 127.0.0.1 --port 0 --seed FILE` (the service
 * built from `src` for the run, see build-service.ts) and
 * resolves once it printed `listening on http://…`. The environment is the test's minus any
 * DATABASE_URL, plus `env`: so a test says exactly which database the server gets.
 */
export async function startServer(options: {
  seedFile?: string;
  env: Record<string, string>;
  /** More arguments for `serve` (e.g. `--demo`). */
  args?: string[];
  /** Replaces `--host 127.0.0.1 --port 0` (to test HOST and PORT). */
  listenArgs?: string[];
}): Promise<Server> {
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const child = spawn(
    process.execPath,
    [
      SERVICE_ENTRY,
      "serve",
      ...(options.listenArgs ?? ["--host", "127.0.0.1", "--port", "0"]),
      ...(options.seedFile === undefined ? [] : ["--seed", options.seedFile]),
      ...(options.args ?? []),
    ],
    {
      cwd: ROOT,
      env: {
        ...inherited,
        LOG_LEVEL: "warn",
        RATE_LIMIT_PER_MINUTE: "1000000",
        RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
        MAX_IN_FLIGHT_REQUESTS: "256",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  started.add(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    // Keep the tail only: a long run logs every 503 it answered.
    err = (err + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => {
      started.delete(child);
      resolve({ code, signal });
    });
  });
  const line = await within(
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = /^listening on (http:\/\/\S+)$/m.exec(out);
        if (match?.[1] !== undefined) resolve(match[1]);
      };
      child.stdout?.on("data", check);
      check();
      exited.then(({ code, signal }) =>
        reject(new Error(`server exited (${code ?? signal}) before listening: ${err}`)),
      );
    }),
    START_TIMEOUT_MS,
    "the server's listening line",
  ).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw error;
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("spawned server has no pid");
  return {
    child,
    pid,
    base: line,
    stderr: () => err,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

/** kill -9, and waits (bounded) until the process is gone. */
export async function killHard(server: Server): Promise<void> {
  if (server.alive()) process.kill(server.pid, "SIGKILL");
  await within(server.exited, 15_000, `process ${server.pid} to die`);
}

/** SIGTERM (graceful: finishes requests, closes the database), SIGKILL if it takes too long. */
export async function stopServer(server: Server): Promise<void> {
  if (!server.alive()) return;
  process.kill(server.pid, "SIGTERM");
  try {
    await within(server.exited, 20_000, `process ${server.pid} to exit`);
  } catch {
    await killHard(server);
  }
}

/** For afterAll: ends every server this file started and that still runs, by its pid. */
export async function stopAllServers(): Promise<void> {
  const children = [...started];
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
      child.kill("SIGKILL");
  }
  await within(
    Promise.all(children.map((c) => new Promise((resolve) => c.once("close", resolve)))),
    15_000,
    "servers to end",
  ).catch(() => {});
}

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type Reply = {
  status: number;
  headers: Headers;
  body: unknown;
  ms: number;
};

/**
 * One HTTP request with a deadline; a JSON body is parsed. Network failures (the server was
 * killed) reject, like fetch does.
 */
export async function call(
  base: string,
  path: string,
  options: { method?: string; key?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  const startedAt = performance.now();
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = options.key;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${base}${path}`, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return {
    status: response.status,
    headers: response.headers,
    body,
    ms: performance.now() - startedAt,
  };
}

export function writeSeed(dir: string, fixture: Fixture): string {
  const file = join(dir, "seed.json");
  writeFileSync(file, JSON.stringify(fixture));
  return file;
}

export const adminUrl = process.env.TEST_DATABASE_URL;

/** Where a test's `serve` keeps its data: PGlite on disk always, PostgreSQL when configured. */
export type Backend = {
  name: string;
  enabled: boolean;
  setUp(): Promise<{ env: Record<string, string>; tearDown(): Promise<void> }>;
};

export function databaseBackends(tempPrefix: string): Backend[] {
  return [
    {
      name: "PGlite on disk",
      enabled: true,
      async setUp() {
        const dataDir = mkdtempSync(join(tmpdir(), tempPrefix));
        return {
          env: { DATA_DIR: dataDir },
          tearDown: async () => rmSync(dataDir, { recursive: true, force: true }),
        };
      },
    },
    {
      name: "PostgreSQL",
      enabled: adminUrl !== undefined,
      async setUp() {
        if (adminUrl === undefined) throw new Error("TEST_DATABASE_URL is not set");
        const database = await createDatabase(adminUrl);
        return { env: { DATABASE_URL: database.url }, tearDown: () => database.drop() };
      },
    },
  ];
}

/** A fresh database on the TEST_DATABASE_URL server; `drop` removes it (and its sessions). */
export async function createDatabase(
  serverUrl: string,
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `tr_rel_${randomBytes(6).toString("hex")}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Fisher-Yates, in place. */
export function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    const a = items[i] as T;
    items[i] = items[j] as T;
    items[j] = a;
  }
  return items;
}

/** `start` plus `days`, as YYYY-MM-DD. */
export function addDays(start: string, days: number): string {
  const d = new Date(`${start}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export type Completed = { code: number | null; stdout: string; stderr: string; ms: number };

/**
 * Runs one `trading-reports` command (`node .test-build/main.js …`) to its end, bounded,
 * with the test's environment minus DATABASE_URL plus `env`. `asUser` runs it through
 * `setpriv` as that uid/gid (the tests run as root, which no file permission stops).
 */
export async function runCommand(
  args: string[],
  env: Record<string, string>,
  options: { asUser?: number; timeoutMs?: number; cwd?: string } = {},
): Promise<Completed> {
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  // An absolute path: the command may run in another directory (`cwd`).
  const node = [process.execPath, SERVICE_ENTRY, ...args];
  const argv =
    options.asUser === undefined
      ? node
      : [
          "setpriv",
          `--reuid=${options.asUser}`,
          `--regid=${options.asUser}`,
          "--clear-groups",
          ...node,
        ];
  const startedAt = performance.now();
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: options.cwd ?? ROOT,
    env: { ...inherited, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await within(
    new Promise<number | null>((resolve) =>
      child.once("close", (c) => {
        started.delete(child);
        resolve(c);
      }),
    ),
    options.timeoutMs ?? START_TIMEOUT_MS,
    `trading-reports ${args.join(" ")} to end`,
  ).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw error;
  });
  return { code, stdout, stderr, ms: performance.now() - startedAt };
}

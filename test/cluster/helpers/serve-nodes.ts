import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import pg from "pg";
import { SERVICE_ENTRY } from "../../helpers/build-service.js";

const ROOT = new URL("../../..", import.meta.url).pathname;

/** The PostgreSQL server the node tests make their databases on (trust auth, user postgres). */
export const POSTGRES_URL =
  process.env.CLUSTER_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

export type NodeDatabase = {
  url: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
};

/** A fresh PostgreSQL database on POSTGRES_URL's server; `drop` removes it. */
export async function nodeDatabase(): Promise<NodeDatabase> {
  const name = `tr_nodes_${randomBytes(6).toString("hex")}`;
  await adminStatement(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  // The database is dropped with (force): a late FATAL from it is no test failure.
  client.on("error", () => {});
  await client.connect();
  return {
    url: url.toString(),
    async query(text, values) {
      return (await client.query(text, values)).rows;
    },
    async drop() {
      await client.end();
      await adminStatement(`drop database if exists ${name} with (force)`);
    },
  };
}

async function adminStatement(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export type ServeNode = {
  port: number;
  url: string;
  pid: number;
  output(): string;
  /** Sends `signal` and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

const { TEST_DATABASE_URL: _unset, ...inherited } = process.env;
const running = new Set<ChildProcess>();

/**
 * Starts `trading-reports serve` (built from the source under test, see build-service.ts) on
 * 127.0.0.1:`port` with `env` added; resolves once it prints its "listening on" line.
 */
export async function startServe(port: number, env: Record<string, string>): Promise<ServeNode> {
  const child = spawn(
    process.execPath,
    [SERVICE_ENTRY, "serve", "--host", "127.0.0.1", "--port", String(port)],
    {
      cwd: ROOT,
      env: { ...inherited, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  running.add(child);
  let out = "";
  const append = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 150_000);
    const check = () => {
      if (out.includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening:\n${out}`));
    });
  });
  if (child.pid === undefined) throw new Error("no pid");
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    output: () => out,
    stop(signal = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Kills whatever `startServe` started that still runs, and waits until it exited (afterAll). */
export async function killServeNodes(): Promise<void> {
  const exits = [...running].map((child) => new Promise((resolve) => child.once("exit", resolve)));
  for (const child of running) child.kill("SIGKILL");
  await Promise.all(exits);
}

/** Polls `condition` every `everyMs` until it holds; fails after `timeoutMs` saying `what`. */
export async function until(
  condition: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

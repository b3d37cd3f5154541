import { execFile } from "node:child_process";
import {
  appendFileSync,
  chownSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);
const PG_BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
export const PGBOUNCER = process.env.PGBOUNCER ?? "/usr/sbin/pgbouncer";

/**
 * A throwaway PostgreSQL primary, optionally a streaming replica (pg_basebackup) and PgBouncer
 * in transaction mode in front of the primary, all on free loopback ports in one temp dir.
 * `stop` removes everything; call it in `afterAll` (it is also run on process exit).
 */
export type Cluster = {
  dir: string;
  /** postgres://postgres@127.0.0.1:PORT/DB on the primary, the replica, PgBouncer. */
  primaryUrl(database?: string): string;
  replicaUrl(database?: string): string;
  pgbouncerUrl(database?: string): string;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops the replica (fast shutdown) or starts it again. */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Waits until the replica has replayed everything the primary has written. */
  replicaCaughtUp(): Promise<void>;
  /** Runs one statement on the primary's `postgres` database. */
  admin(statement: string): Promise<void>;
  stop(): Promise<void>;
};

type Options = { replica?: boolean; pgbouncer?: boolean };

/** A port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Runs a command as the `postgres` user when we are root (initdb and postgres refuse root). */
async function asPostgres(command: string, args: string[]): Promise<string> {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot
    ? ["runuser", ["-u", "postgres", "--", command, ...args]]
    : [command, args];
  const { stdout } = await run(file, argv, { maxBuffer: 10 * 1024 * 1024 });
  return stdout;
}

function ownByPostgres(path: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = postgresUser();
  chownSync(path, uid, gid);
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  if (line === undefined) throw new Error("no postgres user");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

const SERVER_SETTINGS = (port: number, dir: string) => `
listen_addresses = '127.0.0.1'
port = ${port}
unix_socket_directories = '${dir}'
wal_level = replica
max_wal_senders = 5
hot_standby = on
hot_standby_feedback = on
max_connections = 200
fsync = off
synchronous_commit = on
full_page_writes = off
shared_buffers = 64MB
logging_collector = off
`;

async function pgCtl(dataDir: string, action: "start" | "stop", dir: string): Promise<void> {
  const args =
    action === "start"
      ? ["-D", dataDir, "-l", `${dataDir}.log`, "-w", "-t", "60", "start"]
      : ["-D", dataDir, "-m", "fast", "-w", "-t", "60", "stop"];
  await asPostgres(`${PG_BIN}/pg_ctl`, args).catch((error: unknown) => {
    const log = readLog(`${dataDir}.log`);
    throw new Error(`pg_ctl ${action} ${dataDir} failed (${dir}): ${String(error)}\n${log}`);
  });
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-2_000);
  } catch {
    return "";
  }
}

async function query(url: string, statement: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end().catch(() => {});
  }
}

async function startPrimary(dir: string): Promise<number> {
  const port = await freePort();
  const data = join(dir, "primary");
  await asPostgres(`${PG_BIN}/initdb`, [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
  ]);
  appendFileSync(join(data, "postgresql.conf"), SERVER_SETTINGS(port, dir));
  await pgCtl(data, "start", dir);
  return port;
}

async function startReplica(dir: string, primaryPort: number): Promise<number> {
  const port = await freePort();
  const data = join(dir, "replica");
  await asPostgres(`${PG_BIN}/pg_basebackup`, [
    "-h",
    "127.0.0.1",
    "-p",
    String(primaryPort),
    "-U",
    "postgres",
    "-D",
    data,
    "-R",
    "-X",
    "stream",
    "--no-sync",
  ]);
  appendFileSync(join(data, "postgresql.conf"), `\nport = ${port}\n`);
  await pgCtl(data, "start", dir);
  return port;
}

async function startPgBouncer(dir: string, primaryPort: number): Promise<number> {
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  const users = join(dir, "userlist.txt");
  writeFileSync(users, `"postgres" ""\n`);
  // The wildcard entry: every database of the primary (the suite makes one per test file).
  // The service's pool sends statement_timeout and idle_in_transaction_session_timeout as
  // startup parameters; PgBouncer 1.18 refuses unknown ones unless told to ignore them.
  writeFileSync(
    ini,
    `[databases]
* = host=127.0.0.1 port=${primaryPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${users}
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,statement_timeout,idle_in_transaction_session_timeout
server_reset_query =
logfile = ${join(dir, "pgbouncer.log")}
pidfile = ${join(dir, "pgbouncer.pid")}
admin_users = postgres
`,
  );
  for (const path of [ini, users]) ownByPostgres(path);
  await asPostgres(PGBOUNCER, ["-d", ini]);
  await waitFor(() => query(`postgres://postgres@127.0.0.1:${port}/postgres`, "select 1"));
  return port;
}

async function waitFor(check: () => Promise<unknown>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function stopPgBouncer(dir: string): void {
  try {
    const pid = Number(readFileSync(join(dir, "pgbouncer.pid"), "utf8").trim());
    if (pid > 0) process.kill(pid, "SIGTERM");
  } catch {
    // not started, or gone already
  }
}

export async function startCluster(options: Options = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "tr-cluster-"));
  ownByPostgres(dir);
  let stopped = false;
  const started: { replica: boolean } = { replica: false };
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", stopNow);
    stopPgBouncer(dir);
    if (started.replica) await pgCtl(join(dir, "replica"), "stop", dir).catch(() => {});
    await pgCtl(join(dir, "primary"), "stop", dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  // A test run cut short still stops the servers (synchronously: immediate shutdown).
  const stopNow = () => {
    stopPgBouncer(dir);
    for (const node of ["replica", "primary"]) {
      try {
        const pid = Number(readFileSync(join(dir, node, "postmaster.pid"), "utf8").split("\n")[0]);
        if (pid > 0) process.kill(pid, "SIGQUIT");
      } catch {
        // not running
      }
    }
  };
  process.on("exit", stopNow);
  try {
    return await assemble(dir, options, started, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function assemble(
  dir: string,
  options: Options,
  started: { replica: boolean },
  stop: () => Promise<void>,
): Promise<Cluster> {
  const primaryPort = await startPrimary(dir);
  const url = (port: number, database = "postgres") =>
    `postgres://postgres@127.0.0.1:${port}/${database}`;
  let replicaPort = 0;
  if (options.replica) {
    replicaPort = await startReplica(dir, primaryPort);
    started.replica = true;
  }
  const bouncerPort = options.pgbouncer ? await startPgBouncer(dir, primaryPort) : 0;
  const onReplica = (statement: string) => query(url(replicaPort), statement);
  return {
    dir,
    primaryUrl: (database) => url(primaryPort, database),
    replicaUrl: (database) => url(replicaPort, database),
    pgbouncerUrl: (database) => url(bouncerPort, database),
    pauseReplay: async () => void (await onReplica("select pg_wal_replay_pause()")),
    resumeReplay: async () => void (await onReplica("select pg_wal_replay_resume()")),
    stopReplica: () => pgCtl(join(dir, "replica"), "stop", dir),
    startReplica: async () => {
      await pgCtl(join(dir, "replica"), "start", dir);
      await waitFor(() => onReplica("select 1"));
    },
    replicaCaughtUp: async () => {
      const target = (await query(url(primaryPort), "select pg_current_wal_lsn()::text as lsn"))
        .rows[0].lsn as string;
      await waitFor(async () => {
        const r = await onReplica(`select pg_last_wal_replay_lsn() >= '${target}'::pg_lsn as done`);
        if (r.rows[0].done !== true) throw new Error(`replica has not replayed ${target}`);
      });
    },
    admin: async (statement) => void (await query(url(primaryPort), statement)),
    stop,
  };
}

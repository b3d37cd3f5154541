import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import { keepPrivate, prepareDataDir } from "./data-dir.js";
import { DiskSpaceGuard } from "./disk-space.js";
import { DISK_WATCHDOG_DEFAULTS, startDiskWatchdog } from "./disk-watchdog.js";
import { PGliteDialect } from "./pglite-dialect.js";
import { PoolMeter, type PoolStats } from "./pool-meter.js";
import { type PreparedStatements, preparingClient } from "./prepared-statements.js";
import type { Tables } from "./tables.js";
import { failedToConnect } from "./unavailable.js";

export type Database = {
  db: Kysely<Tables>;
  /** DATABASE_READ_URL's replica, when configured (see read-router.ts for what reads it). */
  replica?: Kysely<Tables>;
  kind: "postgres" | "pglite";
  /** The connection pool's figures now (GET /metrics). */
  poolStats(): PoolStats;
  /** Whether the hot statements go by name (DB_PREPARED_STATEMENTS); never on PGlite. */
  preparedStatements: PreparedStatements;
  /**
   * An on-disk embedded database's disk reserve crossed, either way (EMBEDDED_DISK_RESERVE_MB:
   * writes refused below it); never called on PostgreSQL or in memory.
   */
  onDiskSpace(listener: (low: boolean, message: string) => void): void;
  /**
   * Resolves when the database answers (`/readyz`). On PostgreSQL a pool whose connections are
   * all busy (a long lock on `reports`, a burst) does not make the database unreachable: the
   * probe then goes over a connection of its own.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
};

const DATE_OID = 1082;
const INT8_OID = 20;
const NUMERIC_OID = 1700;

// Dates stay the strings the API speaks (YYYY-MM-DD): JavaScript Date objects would shift
// them by the process time zone. Counts and ids fit in a double.
const parsers = {
  [DATE_OID]: (value: string) => value,
  [INT8_OID]: (value: string) => Number(value),
  [NUMERIC_OID]: (value: string) => Number(value),
};

/**
 * The embedded database's PostgreSQL settings, before PGLITE_SETTINGS. PGlite's default 128 MB
 * of shared buffers sit in the WebAssembly heap, which never shrinks, and cost the server about
 * 120 MB of resident memory from the start; a DATA_DIR's files are read through the operating
 * system's cache anyway, and ingest measured no slower with 16 MB (README "Performance", issue
 * 19). PGlite's `initialMemory` cannot go below its 128 MB: the module refuses a smaller one.
 */
const EMBEDDED_SETTINGS = ["shared_buffers=16MB"];

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  return config.kind === "postgres" ? openPostgres(config) : openPGlite(config);
}

async function openPGlite({
  dataDir,
  settings = [],
  template,
  diskReserveBytes = 0,
}: Extract<DatabaseConfig, { kind: "pglite" }>): Promise<Database> {
  const path = dataDir === undefined ? undefined : prepareDataDir(dataDir);
  // Later `-c` win, so PGLITE_SETTINGS override the defaults.
  const startParams = [
    ...PGlite.defaultStartParams,
    ...[...EMBEDDED_SETTINGS, ...settings].flatMap((s) => ["-c", s]),
  ];
  // PGlite's own error says only "failed to initialize"; PostgreSQL's FATAL line says why
  // (an unknown or invalid PGLITE_SETTINGS entry, for one).
  let fatal: string | undefined;
  const onStderr = (text: string) => {
    if (text.includes("FATAL:")) fatal = text.slice(text.indexOf("FATAL:") + 6).trim();
    return false;
  };
  const options = { parsers, startParams, onStderr, loadDataDir: template };
  const pglite = await PGlite.create(dataDir, options).catch((error: unknown) => {
    throw fatal === undefined ? error : new Error(fatal, { cause: error });
  });
  if (path !== undefined) keepPrivate(path);
  let diskListener: (low: boolean, message: string) => void = () => {};
  const guard =
    path === undefined || diskReserveBytes === 0
      ? undefined
      : new DiskSpaceGuard(path, diskReserveBytes, (low, message) => diskListener(low, message));
  await guard?.start();
  const watchdog =
    path === undefined ? undefined : startDiskWatchdog({ path, ...DISK_WATCHDOG_DEFAULTS });
  const dialect = new PGliteDialect(pglite, guard);
  const db = new Kysely<Tables>({ dialect });
  return {
    db,
    kind: "pglite",
    poolStats: () => dialect.stats(),
    preparedStatements: { inUse: () => false, onLost: () => {} },
    ping: () => ping(db),
    onDiskSpace(listener) {
      diskListener = listener;
      if (guard?.isLow()) guard.announce();
    },
    async close() {
      guard?.stop();
      await watchdog?.stop();
      await db.destroy();
      await pglite.close();
    },
  };
}

async function openPostgres(
  config: Extract<DatabaseConfig, { kind: "postgres" }>,
): Promise<Database> {
  const { db, poolStats, preparedStatements, probe } = postgresKysely(config.url, config);
  const primary = {
    db,
    kind: "postgres" as const,
    poolStats,
    preparedStatements,
    onDiskSpace: () => {},
    ping: probe.ping,
  };
  if (config.readReplica === undefined) {
    return {
      ...primary,
      close: async () => {
        await Promise.all([db.destroy(), probe.close()]);
      },
    };
  }
  const replica = postgresKysely(config.readReplica.url, config);
  return {
    ...primary,
    replica: replica.db,
    close: async () => {
      await Promise.all([db.destroy(), probe.close(), replica.db.destroy(), replica.probe.close()]);
    },
  };
}

function postgresKysely(
  url: string,
  config: Extract<DatabaseConfig, { kind: "postgres" }>,
): {
  db: Kysely<Tables>;
  poolStats: () => PoolStats;
  preparedStatements: PreparedStatements;
  probe: ReadinessProbe;
} {
  const types = {
    getTypeParser: ((oid: number, format?: string) => {
      const parse = parsers[oid as keyof typeof parsers];
      return parse ?? pg.types.getTypeParser(oid, format as "text");
    }) as typeof pg.types.getTypeParser,
  };
  const preparing = preparingClient(config.preparedStatements ?? true);
  // The timeouts go as startup parameters: behind PgBouncer (which does not pass them on) the
  // role's own settings apply instead (README "PgBouncer").
  const poolOptions = {
    connectionString: url,
    max: config.poolSize,
    connectionTimeoutMillis: config.connectTimeoutMs,
    statement_timeout: config.statementTimeoutMs,
    query_timeout: config.statementTimeoutMs + 1_000,
    idle_in_transaction_session_timeout: config.statementTimeoutMs,
    keepAlive: true,
    types,
    Client: preparing.Client,
  };
  const pool = quietPool(poolOptions);
  const poolStats = meterConnections(pool, config.poolSize);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    poolStats,
    preparedStatements: preparing.statements,
    probe: readinessProbe(db, pool, poolOptions),
  };
}

function quietPool(options: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(options);
  // An idle client whose server went away emits 'error'; without a listener that would end
  // the process. The pool drops the client and the next request reconnects.
  pool.on("error", () => {});
  // The pool listens for errors only while a client is idle. A client checked out (a query in
  // flight) whose server goes away fails its query AND emits 'error'; unheard, that event
  // would end the whole process on the first outage. The query's failure still reaches the
  // caller (a 503), and the pool discards the broken client when it is released.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  return pool;
}

type ReadinessProbe = { ping(): Promise<void>; close(): Promise<void> };

/**
 * `select 1` over the pool while it has a connection to spare; when every one is busy, over a
 * connection of the probe's own (opened then, closed after a minute unused), so that a node
 * whose requests wait on a lock is not reported unready with the database answering: behind a
 * balancer every node would turn unready at once, and their waiting requests would fail.
 */
function readinessProbe(db: Kysely<Tables>, pool: pg.Pool, options: pg.PoolConfig): ReadinessProbe {
  let own: pg.Pool | undefined;
  return {
    async ping() {
      const spare = pool.idleCount > 0 || pool.totalCount < (options.max ?? 10);
      if (spare) return ping(db);
      own ??= quietPool({ ...options, max: 1, idleTimeoutMillis: 60_000 });
      await own.query("select 1");
    },
    async close() {
      await own?.end();
    },
  };
}

/**
 * Times every `pool.connect()` (Kysely's only way in), marks its failures as the database being
 * unavailable, and reads the pool's own counts.
 */
function meterConnections(pool: pg.Pool, max: number): () => PoolStats {
  const meter = new PoolMeter();
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  pool.connect = (() => meter.time(connect).catch(failedToConnect)) as typeof pool.connect;
  return () => ({
    max,
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    acquired: meter.acquired,
    waitSeconds: meter.waitSeconds,
  });
}

export async function ping(db: Kysely<Tables>): Promise<void> {
  await sql`select 1`.execute(db);
}

import { setImmediate as nextTurn } from "node:timers/promises";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type RawBuilder,
  sql,
} from "kysely";
import type { DiskSpaceGuard } from "./disk-space.js";
import { PoolMeter, type PoolStats } from "./pool-meter.js";

const SCRIPT = "/* script: several statements */\n";

/**
 * SQL text of several statements (a migration file), run as one script. PostgreSQL (pg) runs
 * a query without parameters through the simple protocol, which takes several statements;
 * PGlite's `query` (the extended protocol) refuses them, so this dialect sends text marked as
 * a script to `exec` instead, and every other query, with or without parameters, to `query`.
 */
export function script(text: string): RawBuilder<unknown> {
  return sql.raw(`${SCRIPT}${text}`);
}

/**
 * Kysely dialect over an embedded PGlite instance.
 *
 * PGlite is one single-user backend: a transaction opened by one request would see the
 * statements of any other request interleaved with it. The driver therefore hands out the
 * one connection to one caller at a time (a FIFO lock), which is what a pool of size 1 does.
 */
export class PGliteDialect implements Dialect {
  /** The one connection's hand-outs and waits (the metrics' pool figures). */
  readonly meter = new PoolMeter();
  private busy = false;

  /** `guard`: an on-disk database's reserve, which refuses writes on a nearly full disk. */
  constructor(
    private readonly pglite: PGlite,
    private readonly guard?: DiskSpaceGuard,
  ) {}

  /** The one connection as a pool of size 1. */
  stats(): PoolStats {
    const { acquired, waitSeconds, pending } = this.meter;
    const busy = this.busy ? 1 : 0;
    return { max: 1, total: 1, idle: 1 - busy, waiting: pending, acquired, waitSeconds };
  }

  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.meter, this.guard, (busy) => {
      this.busy = busy;
    });
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private queue: Promise<void> = Promise.resolve();
  private readonly connection: PGliteConnection;

  constructor(
    pglite: PGlite,
    private readonly meter: PoolMeter,
    guard: DiskSpaceGuard | undefined,
    private readonly setBusy: (busy: boolean) => void,
  ) {
    this.connection = new PGliteConnection(pglite, guard);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.meter.time(() => this.takeTurn());
  }

  private async takeTurn(): Promise<DatabaseConnection> {
    let release: () => void = () => {};
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    // PGlite runs on this thread and its queued callers resume one another in microtasks: 64
    // requests waiting for the connection would hold the event loop until the last is done,
    // and no other request (a health probe) could even be read. Each hand-over waits one turn.
    await nextTurn();
    this.setBusy(true);
    this.connection.release = () => {
      this.setBusy(false);
      release();
    };
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: "begin", parameters: [] } as unknown as CompiledQuery);
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: "commit", parameters: [] } as unknown as CompiledQuery);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: "rollback", parameters: [] } as unknown as CompiledQuery);
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PGliteConnection).release();
  }
  async destroy(): Promise<void> {}
}

class PGliteConnection implements DatabaseConnection {
  release: () => void = () => {};
  constructor(
    private readonly pglite: PGlite | Transaction,
    private readonly guard?: DiskSpaceGuard,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.guard?.admit(query.sql);
    const result = query.sql.startsWith(SCRIPT)
      ? lastOf(await this.pglite.exec(query.sql))
      : await this.pglite.query<R>(query.sql, query.parameters as unknown[]);
    return {
      rows: result.rows as R[],
      numAffectedRows: result.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered by PGlite's query API.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("PGlite does not support streaming queries");
  }
}

function lastOf<T>(results: T[]): T {
  const last = results.at(-1);
  if (last === undefined) throw new Error("PGlite returned no result");
  return last;
}

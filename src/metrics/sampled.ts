import { Counter, Gauge, type Registry } from "prom-client";
import type { PoolStats } from "../store/pool-meter.js";

type Freshness = { version: number; changedAt: Date | null; syncedAt: Date | null };

/** Where the figures that are states come from; each is read when /metrics is scraped. */
export type MetricsSources = {
  poolStats: () => PoolStats;
  /** The reference data's version, when it last changed and when market data last synced. */
  referenceFreshness: () => Promise<Freshness>;
  /**
   * Seconds the read replica is behind the primary (undefined: unknown, the replica is down).
   * Absent when no replica is configured: then the metric is not exported at all (a 0 would
   * claim a replica that is up to date).
   */
  replicaLagSeconds?: () => Promise<number | undefined> | number | undefined;
  /** Stored batches whose month counts serve has not folded in yet (a few, unless it stalls). */
  monthCountDeltasPending?: () => Promise<number>;
  /** Whether the batch upsert goes as a named prepared statement now (DB_PREPARED_STATEMENTS). */
  preparedStatementsInUse?: () => boolean;
  now?: () => Date;
};

/** Pool, replica and reference-data figures, computed at each scrape. */
export function registerSampledMetrics(registry: Registry, sources: MetricsSources): void {
  registerPoolMetrics(registry, sources.poolStats);
  registerReferenceMetrics(registry, sources);
  const { monthCountDeltasPending: pending, preparedStatementsInUse: inUse } = sources;
  if (pending !== undefined) {
    sampledGauge(
      registry,
      "trading_reports_month_count_deltas_pending",
      "Stored batches whose month counts are not yet folded into the listing's counts (NaN: the database did not answer)",
      pending,
    );
  }
  if (inUse !== undefined) {
    sampledGauge(
      registry,
      "trading_reports_db_prepared_statements",
      "1 while the batch upsert goes as a named prepared statement; 0 when off or fallen back after a pooler lost one",
      () => (inUse() ? 1 : 0),
    );
  }
  const lag = sources.replicaLagSeconds;
  if (lag === undefined) return;
  sampledGauge(
    registry,
    "trading_reports_replica_lag_seconds",
    "How far the read replica is behind the primary (NaN: unknown; absent: no replica)",
    lag,
  );
}

/** A gauge set from `read` at each scrape: NaN when it fails or does not know. */
function sampledGauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => Promise<number | undefined> | number | undefined,
): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const value = await Promise.resolve()
        .then(read)
        .catch(() => undefined);
      this.set(value ?? Number.NaN);
    },
  });
}

function registerPoolMetrics(registry: Registry, read: () => PoolStats): void {
  const registers = [registry];
  // One read per scrape, shared by the metrics below (collect runs them in turn).
  let stats = read();
  new Gauge({
    name: "trading_reports_db_pool_max_connections",
    help: "The most connections the database pool opens (PGlite: its one connection)",
    registers,
    collect() {
      stats = read();
      this.set(stats.max);
    },
  });
  new Gauge({
    name: "trading_reports_db_pool_connections",
    help: "Open database connections by state: active (a query holds it) or idle",
    labelNames: ["state"] as const,
    registers,
    collect() {
      this.set({ state: "active" }, stats.total - stats.idle);
      this.set({ state: "idle" }, stats.idle);
    },
  });
  new Gauge({
    name: "trading_reports_db_pool_waiting_clients",
    help: "Queries waiting for a database connection now",
    registers,
    collect() {
      this.set(stats.waiting);
    },
  });
  cumulative(
    registry,
    "trading_reports_db_pool_acquires_total",
    "Connections handed out",
    () => stats.acquired,
  );
  cumulative(
    registry,
    "trading_reports_db_pool_wait_seconds_total",
    "Seconds spent waiting for a database connection (divide by acquires for the mean wait)",
    () => stats.waitSeconds,
  );
}

/** A counter whose total is kept elsewhere (the pool meter) and copied at each scrape. */
function cumulative(registry: Registry, name: string, help: string, total: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(total());
    },
  });
}

function registerReferenceMetrics(registry: Registry, sources: MetricsSources): void {
  const registers = [registry];
  const now = sources.now ?? (() => new Date());
  // Read once per scrape by the first gauge; the others (collected right after it, in
  // registration order, before it resolves) await the same read.
  let freshness: Promise<Freshness | undefined> = Promise.resolve(undefined);
  new Gauge({
    name: "trading_reports_reference_data_version",
    help: "The version of the reference data (coins, exchanges, markets) in the database",
    registers,
    async collect() {
      // The database may be down: the scrape still answers, these figures NaN (unknown).
      freshness = sources.referenceFreshness().catch(() => undefined);
      this.set((await freshness)?.version ?? Number.NaN);
    },
  });
  new Gauge({
    name: "trading_reports_reference_data_age_seconds",
    help: "Seconds since the reference data last changed (a fixture load or a market-data sync that changed it)",
    registers,
    async collect() {
      const changedAt = (await freshness)?.changedAt;
      this.set(changedAt == null ? Number.NaN : (now().getTime() - changedAt.getTime()) / 1000);
    },
  });
  new Gauge({
    name: "trading_reports_market_data_last_sync_timestamp_seconds",
    help: "Unix time of the last completed market-data sync (NaN: never synced)",
    registers,
    async collect() {
      const syncedAt = (await freshness)?.syncedAt;
      this.set(syncedAt == null ? Number.NaN : syncedAt.getTime() / 1000);
    },
  });
}

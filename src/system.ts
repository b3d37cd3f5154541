import { resolve } from "node:path";
import { createCoinGeckoClient } from "./adapters/coingecko-client.js";
import type { Config } from "./config.js";
import { lazyRateCounters } from "./http/abuse/rate-counter-stores.js";
import { type AppOptions, buildApp } from "./http/app.js";
import { listenForMetrics } from "./http/metrics.js";
import { startWebhookDeliveries, type WebhookJobOptions } from "./jobs/webhook-deliveries.js";
import { createWebhookEventProducer } from "./jobs/webhook-event-producer.js";
import { createMetrics, type Metrics, type MetricsSources } from "./metrics/metrics.js";
import { createAdminServices } from "./services/admin.js";
import { createServices } from "./services/index.js";
import type { SubmissionMeter } from "./services/submission-meter.js";
import { DataDirError, describeOsError } from "./store/data-dir.js";
import { type Database, openDatabase } from "./store/database.js";
import { refuseRoundedFloats } from "./store/float-output.js";
import { migrate } from "./store/migrate.js";
import { createReadRouter, primaryOnly, type ReadRouting } from "./store/read-router.js";
import { createStores, type Stores } from "./store/stores.js";
import { unreachableAtStart } from "./store/unavailable.js";

/**
 * The composition root: the whole system, wired once. `serve` and every CLI command build
 * one; nothing else creates stores or services.
 *
 *   config ─► database (PGlite or PostgreSQL) ─► stores (all SQL)
 *          ─► services (market-maker use cases, called by http/ and cli/)
 *          ─► admin (operator use cases, with the CoinGecko adapter)
 *          ─► http (the Fastify app over the services; `serve` makes it listen)
 *          ─► jobs (webhook deliveries; `serve` starts and stops them)
 */
export async function createSystem(
  config: Config,
  options: {
    /**
     * An open, migrated database (its `close` is called by the system's): the server's own,
     * for a command sent to it. Without one, the configured database is opened and migrated.
     */
    database?: Database;
    now?: () => Date;
    /** The read replica's lag in seconds, for GET /metrics (absent: no replica). */
    replicaLagSeconds?: MetricsSources["replicaLagSeconds"];
  } = {},
) {
  // `applied`: the migrations applied on opening (none on a database the system was given).
  const { database, applied } =
    options.database === undefined
      ? await openMigrated(config)
      : { database: options.database, applied: [] as string[] };
  const storeOptions = {
    parallelism: parallelismOf(config),
    publicDepthTolerance: config.publicDepthTolerance,
  };
  const stores = createStores(database.db, { ...storeOptions, ping: database.ping });
  const reads = readRoutingOf(config, database, stores, storeOptions);
  const now = options.now ?? (() => new Date());
  const metrics = metricsOf(
    config,
    database,
    stores,
    options.replicaLagSeconds ?? (database.replica && replicaLagOf(reads)),
  );
  const services = servicesOf(config, stores, { now, reads, meter: metrics?.submissions });
  const admin = adminOf(config, stores, now);
  const rateCounters = lazyRateCounters(config, database);
  const exposure = metrics && { metrics, token: config.metrics.token };
  const app = { services, http: config.http, metrics: exposure };
  /** The HTTP API over these services (not listening yet). */
  const http = async (logger: AppOptions["logger"], draining?: () => boolean) =>
    buildApp({ ...app, logger, draining, rateCounters: await rateCounters.open() });
  return {
    config,
    database,
    applied,
    stores,
    services,
    admin,
    http,
    /** The shared rate-limit store's reachability (`serve` logs its changes). */
    rateStore: rateCounters.reachability,
    /** METRICS_PORT's own listener (`serve` starts it; undefined: not configured). */
    listenForMetrics: async () =>
      exposure && config.metrics.listen && listenForMetrics(exposure, config.metrics.listen),
    /** The webhook delivery job (`serve` runs it; `stop` before `close`). */
    startWebhookDeliveries: (options: Partial<WebhookJobOptions> = {}) =>
      startWebhookDeliveries(stores, { ...config.webhooks, now, ...options }),
    /** Raises report.missing, report.late and kpi.missed; `serve` starts and stops it. */
    webhookEventProducer: createWebhookEventProducer(stores, {
      deadlineUtc: config.reportDeadlineUtc,
      pollMs: config.webhookEventsPollMs,
      now,
    }),
    close: () => rateCounters.close().then(() => database.close()),
  };
}

export type System = Awaited<ReturnType<typeof createSystem>>;

/** The use cases, configured: deadlines, webhook policy, sessions, reads and the meter. */
function servicesOf(
  config: Config,
  stores: Stores,
  wiring: { now: () => Date; reads: ReadRouting; meter: SubmissionMeter | undefined },
) {
  return createServices(stores, {
    referenceDataCheckMs: config.referenceDataCheckMs,
    now: wiring.now,
    reportDeadlineUtc: config.reportDeadlineUtc,
    webhooks: config.webhooks,
    dashboardSessions: config.dashboardSessions,
    submissionMeter: wiring.meter,
    reads: wiring.reads,
  });
}

/** Reads on DATABASE_READ_URL's replica when there is one (README "Read replica"). */
function readRoutingOf(
  config: Config,
  database: Database,
  stores: Stores,
  storeOptions: Parameters<typeof createStores>[1],
): ReadRouting {
  const replica = config.database.kind === "postgres" ? config.database.readReplica : undefined;
  if (database.replica === undefined || replica === undefined) return primaryOnly(stores);
  return createReadRouter({
    primary: database.db,
    replica: database.replica,
    primaryStores: stores,
    replicaStores: createStores(database.replica, storeOptions),
    maxLagMs: replica.maxLagMs,
  });
}

/**
 * Applies pending migrations over DATABASE_MIGRATION_URL when set: a direct connection, not
 * the pooler DATABASE_URL may point at.
 */
async function migrateDirectly(url: string, config: Config): Promise<string[]> {
  if (config.database.kind !== "postgres") return [];
  const direct = await openDatabase({
    ...config.database,
    url,
    poolSize: 1,
    readReplica: undefined,
  });
  try {
    return await migrate(direct.db);
  } catch (error) {
    throw unreachableAtStart(error, url, "DATABASE_MIGRATION_URL");
  } finally {
    await direct.close();
  }
}

/** The operator's commands, with the deadline and the CoinGecko client of the configuration. */
function adminOf(config: Config, stores: Stores, now: () => Date) {
  return createAdminServices(stores, {
    now,
    reportDeadlineUtc: config.reportDeadlineUtc,
    coinGecko: (onRetry) => createCoinGeckoClient({ ...config.coinGecko, onRetry }),
  });
}

/** Opens the configured database and applies pending migrations. */
async function openMigrated(config: Config): Promise<{ database: Database; applied: string[] }> {
  const migrationUrl = config.database.kind === "postgres" ? config.database.migrationUrl : "";
  const appliedDirectly = migrationUrl ? await migrateDirectly(migrationUrl, config) : undefined;
  const dataDir = config.database.kind === "pglite" ? config.database.dataDir : undefined;
  const database = await openDatabase(config.database).catch((error: unknown) => {
    if (config.database.kind === "postgres")
      throw unreachableAtStart(error, config.database.url, "DATABASE_URL");
    if (dataDir === undefined) throw error;
    throw new DataDirError(
      `cannot open the embedded database in DATA_DIR ${resolve(dataDir)}: ${describeOsError(error)}`,
      { cause: error },
    );
  });
  try {
    await refuseRoundedFloats(database.db);
    return { database, applied: appliedDirectly ?? (await migrate(database.db)) };
  } catch (error) {
    await database.close();
    throw config.database.kind === "postgres"
      ? unreachableAtStart(error, config.database.url, "DATABASE_URL")
      : error;
  }
}

/** The metrics, when GET /metrics is served somewhere (METRICS_PORT or METRICS_TOKEN). */
function metricsOf(
  config: Config,
  database: Database,
  stores: Stores,
  replicaLagSeconds: MetricsSources["replicaLagSeconds"],
): Metrics | undefined {
  if (!config.metrics.enabled) return undefined;
  return createMetrics({
    poolStats: database.poolStats,
    referenceFreshness: stores.operator.referenceFreshness,
    monthCountDeltasPending: stores.monthCounts.pending,
    preparedStatementsInUse: database.preparedStatements.inUse,
    replicaLagSeconds,
  });
}

/** The replica's lag in seconds as the read router last saw it; undefined when unreachable. */
function replicaLagOf(reads: ReadRouting): () => Promise<number | undefined> {
  return async () => {
    const lagMs = (await reads.replica())?.lagMs;
    return lagMs === null || lagMs === undefined ? undefined : lagMs / 1000;
  };
}

/**
 * Connections one request may use at once: DB_QUERY_PARALLELISM, at most half of PostgreSQL's
 * pool (so that one request never holds all of it); PGlite has one.
 */
export function parallelismOf(config: Config): number {
  const { database } = config;
  if (database.kind !== "postgres") return 1;
  const wanted = database.queryParallelism ?? DEFAULT_QUERY_PARALLELISM;
  return Math.max(1, Math.min(wanted, Math.floor(database.poolSize / 2)));
}

/** README "Configuration": what a year-long scorecard gains most from on a 2-core server. */
const DEFAULT_QUERY_PARALLELISM = 2;

import { type Environment, environmentSchema, setVariables } from "./config-environment.js";
import type { SessionLimits } from "./domain/dashboard-session.js";
import { zod3Messages } from "./schemas/zod-messages.js";

export type Config = {
  database: DatabaseConfig;
  listen: { host: string; port: number };
  logLevel: Environment["LOG_LEVEL"];
  http: HttpConfig;
  referenceDataCheckMs: number;
  /** `database`, `redis`: rate limits are the whole cluster's (one call per counted request). */
  rateLimitStore: "memory" | "database" | "redis";
  /** `REDIS_URL`: where `redis` rate limits count. */
  redisUrl?: string;
  /** After SIGTERM: `/readyz` answers 503 this long, requests still served, before closing. */
  shutdownDrainMs: number;
  coinGecko: { baseUrl?: string; apiKey?: string; keyType: "demo" | "pro" };
  /** `HH:MM` (UTC): the report for day D is due by D+1 at this time. */
  reportDeadlineUtc: string;
  /** `exceeds_public_depth` beyond public depth × (1 + this) (CONTRACT section 6). */
  publicDepthTolerance: number;
  webhooks: WebhookConfig;
  webhookEventsPollMs: number;
  /** Days `submissions purge` keeps of the submission log. */
  submissionLogDays: number;
  dashboardSessions: SessionLimits;
  metrics: MetricsConfig;
};

/** Where GET /metrics is served; `enabled` false: nowhere (and nothing is counted). */
export type MetricsConfig = {
  enabled: boolean;
  /** METRICS_PORT and METRICS_HOST: a listener of its own. */
  listen: { host: string; port: number } | undefined;
  /** METRICS_TOKEN: the Bearer token; with it, the API's port serves /metrics too. */
  token: string | undefined;
};

export type WebhookConfig = {
  /** WEBHOOK_ALLOW_INSECURE: http:// and non-public addresses allowed (development, tests). */
  allowInsecure: boolean;
  /** An attempt that has no 2xx answer within this long failed. */
  timeoutMs: number;
  /** Seconds before the 2nd, 3rd, … attempt; then the delivery has failed. */
  retrySchedule: number[];
  perOrganization: number;
  /** Attempts one process makes at once. */
  concurrency: number;
};

export type DatabaseConfig =
  | {
      kind: "postgres";
      url: string;
      poolSize: number;
      statementTimeoutMs: number;
      connectTimeoutMs: number;
      /** DATABASE_READ_URL: a streaming replica for reads, and the lag past which it is not. */
      readReplica?: { url: string; maxLagMs: number };
      /** DATABASE_MIGRATION_URL: migrations over a direct connection (not through a pooler). */
      migrationUrl?: string;
      /** DB_PREPARED_STATEMENTS: the batch upsert prepared once per connection (default true). */
      preparedStatements?: boolean;
      /** DB_QUERY_PARALLELISM: connections one scorecard request may use at once (default 2). */
      queryParallelism?: number;
    }
  | {
      kind: "pglite";
      dataDir: string | undefined;
      /** PGLITE_SETTINGS: `name=value` PostgreSQL settings applied after the service's own. */
      settings?: string[];
      /**
       * An in-memory database's starting files (PGlite's `dumpDataDir`) instead of a new,
       * empty cluster: the tests start every database from one migrated copy.
       */
      template?: Blob;
      /** EMBEDDED_DISK_RESERVE_MB: writes are refused while less is free on DATA_DIR's disk. */
      diskReserveBytes?: number;
    };

export type HttpConfig = {
  bodyLimitBytes: number;
  rateLimitPerMinute: number;
  maxInFlightRequests: number;
  /** Headers and body of a request must arrive within it (the upload timeout). */
  requestTimeoutMs: number;
  /** A connection on which no byte moves either way for this long is closed. */
  idleTimeoutMs: number;
  maxConnectionsPerAddress: number;
  maxExportsPerKey: number;
  rateLimitPerAddressPerMinute: number;
  authFailuresPerMinute: number;
  /** `/healthz` and `/readyz` have a budget of their own, apart from everything else. */
  healthProbesPerAddressPerMinute: number;
  maxProblemsPerResponse: number;
  /** Where clients reach the service (PUBLIC_URL): the server of the OpenAPI document. */
  publicUrl: string | undefined;
  /** `http://HOST:PORT` of the environment: the document's server when nothing else says. */
  listenUrl: string;
  /** Proxies (addresses, CIDRs) whose X-Forwarded-For gives the client address. */
  trustProxy: string | undefined;
};

export class ConfigError extends Error {}

/** `http://host:port`, with an IPv6 host in brackets. */
export function httpUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = environmentSchema.safeParse(setVariables(env), zod3Messages);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join(".")}: ${issue.message}`,
    );
    throw new ConfigError(`invalid environment: ${problems.join("; ")}`);
  }
  const e = parsed.data;
  return {
    database: databaseConfig(e),
    listen: { host: e.HOST, port: e.PORT },
    logLevel: e.LOG_LEVEL,
    http: {
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
      maxInFlightRequests: e.MAX_IN_FLIGHT_REQUESTS,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      idleTimeoutMs: e.IDLE_TIMEOUT_MS,
      maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
      maxExportsPerKey: e.MAX_EXPORTS_PER_KEY,
      rateLimitPerAddressPerMinute: e.RATE_LIMIT_PER_ADDRESS_PER_MINUTE,
      authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
      healthProbesPerAddressPerMinute: e.HEALTH_PROBES_PER_ADDRESS_PER_MINUTE,
      maxProblemsPerResponse: e.MAX_PROBLEMS_PER_RESPONSE,
      publicUrl: e.PUBLIC_URL,
      listenUrl: httpUrl(e.HOST, e.PORT),
      trustProxy: e.TRUST_PROXY,
    },
    referenceDataCheckMs: e.REFERENCE_DATA_CHECK_MS,
    ...rateLimitStoreOf(e),
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    coinGecko: {
      baseUrl: e.COINGECKO_BASE_URL,
      apiKey: e.COINGECKO_API_KEY,
      keyType: e.COINGECKO_KEY_TYPE,
    },
    reportDeadlineUtc: e.REPORT_DEADLINE_UTC,
    publicDepthTolerance: e.PUBLIC_DEPTH_TOLERANCE,
    webhooks: {
      allowInsecure: e.WEBHOOK_ALLOW_INSECURE === "true",
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE,
      perOrganization: e.WEBHOOKS_PER_ORGANIZATION,
      concurrency: e.WEBHOOK_CONCURRENCY,
    },
    webhookEventsPollMs: e.WEBHOOK_EVENTS_POLL_MS,
    submissionLogDays: e.SUBMISSION_LOG_DAYS,
    dashboardSessions: {
      idleMs: e.DASHBOARD_SESSION_IDLE_MINUTES * 60_000,
      maxMs: e.DASHBOARD_SESSION_MAX_HOURS * 3_600_000,
    },
    metrics: {
      enabled: e.METRICS_PORT !== undefined || e.METRICS_TOKEN !== undefined,
      listen:
        e.METRICS_PORT === undefined ? undefined : { host: e.METRICS_HOST, port: e.METRICS_PORT },
      token: e.METRICS_TOKEN,
    },
  };
}

function databaseConfig(e: Environment): DatabaseConfig {
  const settings = e.PGLITE_SETTINGS === undefined ? {} : { settings: e.PGLITE_SETTINGS };
  if (e.DATABASE_URL === undefined) {
    const diskReserveBytes = e.EMBEDDED_DISK_RESERVE_MB * 1024 * 1024;
    return { kind: "pglite", dataDir: e.DATA_DIR, diskReserveBytes, ...settings };
  }
  if (e.DATABASE_URL.startsWith("memory://")) {
    return { kind: "pglite", dataDir: undefined, ...settings };
  }
  return {
    kind: "postgres",
    url: e.DATABASE_URL,
    poolSize: e.DB_POOL_SIZE,
    statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
    preparedStatements: e.DB_PREPARED_STATEMENTS !== "false",
    queryParallelism: e.DB_QUERY_PARALLELISM,
    ...(e.DATABASE_READ_URL === undefined
      ? {}
      : { readReplica: { url: e.DATABASE_READ_URL, maxLagMs: e.READ_REPLICA_MAX_LAG_MS } }),
    ...(e.DATABASE_MIGRATION_URL === undefined ? {} : { migrationUrl: e.DATABASE_MIGRATION_URL }),
  };
}

/** RATE_LIMIT_STORE, by default `redis` when REDIS_URL is set (README "Several nodes"). */
function rateLimitStoreOf(e: Environment) {
  const store = e.RATE_LIMIT_STORE ?? (e.REDIS_URL === undefined ? "memory" : "redis");
  return { rateLimitStore: store, redisUrl: e.REDIS_URL };
}

import { z } from "zod";
import type { SessionLimits } from "./domain/dashboard-session.js";
import { DEADLINE_PATTERN } from "./domain/obligation.js";
import { DEFAULT_RETRY_SCHEDULE } from "./domain/webhook.js";
import { zod3Messages } from "./schemas/zod-messages.js";

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** The whole environment the service reads, parsed once at start-up. */
const environmentSchema = z.object({
  // An empty value (as env files often have) means unset.
  DATABASE_URL: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(/^(memory:\/\/|postgres(ql)?:\/\/)/, "must be memory:// or a postgres:// URL")
      .optional(),
  ),
  DATA_DIR: z.string().min(1).default("./data"),
  // `serve --host/--port` win over these.
  HOST: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).default("127.0.0.1")),
  PORT: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(0).max(65_535).default(8080),
  ),
  // Where clients reach the service (behind a proxy: its public https address); the OpenAPI
  // document's server. Default: the address the server listens on.
  PUBLIC_URL: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, "must be an http(s) URL without query")
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
  ),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  BODY_LIMIT_BYTES: positiveInt(2 * 1024 * 1024),
  RATE_LIMIT_PER_MINUTE: positiveInt(1200),
  MAX_IN_FLIGHT_REQUESTS: positiveInt(64),
  REQUEST_TIMEOUT_MS: positiveInt(30_000),
  // Abuse limits (docs/reliability.md, "Abuse").
  IDLE_TIMEOUT_MS: positiveInt(10_000),
  MAX_CONNECTIONS_PER_ADDRESS: positiveInt(64),
  MAX_EXPORTS_PER_KEY: positiveInt(2),
  RATE_LIMIT_PER_ADDRESS_PER_MINUTE: positiveInt(6000),
  AUTH_FAILURES_PER_MINUTE: positiveInt(30),
  HEALTH_PROBES_PER_ADDRESS_PER_MINUTE: positiveInt(3000),
  MAX_PROBLEMS_PER_RESPONSE: positiveInt(100),
  DB_POOL_SIZE: positiveInt(10),
  DB_STATEMENT_TIMEOUT_MS: positiveInt(15_000),
  DB_CONNECT_TIMEOUT_MS: positiveInt(3_000),
  // Several nodes (README "Several nodes"): where rate limits count, how long a stopping
  // process answers 503 on /readyz while serving on, which proxies' X-Forwarded-For is believed.
  RATE_LIMIT_STORE: z.enum(["memory", "database", "redis"]).optional(),
  REDIS_URL: z.preprocess((v) => (v === "" ? undefined : v), z.string().url().optional()),
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().nonnegative().default(0),
  TRUST_PROXY: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()),
  REFERENCE_DATA_CHECK_MS: z.coerce.number().int().nonnegative().default(1_000),
  COINGECKO_BASE_URL: z.string().url().optional(),
  COINGECKO_API_KEY: z.string().min(1).optional(),
  COINGECKO_KEY_TYPE: z.enum(["demo", "pro"]).default("demo"),
  // Dashboard sessions (README "Dashboard"): idle and absolute expiry.
  DASHBOARD_SESSION_IDLE_MINUTES: positiveInt(30),
  DASHBOARD_SESSION_MAX_HOURS: positiveInt(12),
  // The time of day (UTC) by which the day before must be reported (CONTRACT section 4).
  REPORT_DEADLINE_UTC: z
    .string()
    .regex(DEADLINE_PATTERN, "must be a time of day HH:MM, 00:00 to 23:59 (UTC)")
    .default("12:00"),
  // How far reported ±2 % depth may exceed the public book before it is flagged (a share).
  PUBLIC_DEPTH_TOLERANCE: z.coerce.number().min(0).max(100).default(0.1),
  // Notifications (CONTRACT section 7; README "Notifications").
  WEBHOOK_ALLOW_INSECURE: z.enum(["true", "false", ""]).default("false"),
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, "must be seconds, comma-separated (e.g. 5,300,1800)")
    .default(DEFAULT_RETRY_SCHEDULE.join(","))
    .transform((text) => text.split(",").map(Number)),
  WEBHOOKS_PER_ORGANIZATION: positiveInt(10),
  WEBHOOK_CONCURRENCY: positiveInt(8),
  // The pause between two passes of the job raising report.missing, report.late, kpi.missed.
  WEBHOOK_EVENTS_POLL_MS: positiveInt(15_000),
  // Days the submission log keeps a submission (CONTRACT section 5); reports are never purged.
  SUBMISSION_LOG_DAYS: positiveInt(400),
  // GET /metrics (README "Metrics"): a listener of its own, and/or the API's port behind a
  // Bearer token; neither set: no metrics at all.
  METRICS_PORT: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(0).max(65_535).optional(),
  ),
  METRICS_HOST: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.string().min(1).default("127.0.0.1"),
  ),
  METRICS_TOKEN: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(/^[\x21-\x7e]{16,}$/, "must be at least 16 printable characters, no spaces")
      .optional(),
  ),
});

export type Config = {
  database: DatabaseConfig;
  listen: { host: string; port: number };
  logLevel: z.infer<typeof environmentSchema>["LOG_LEVEL"];
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
    }
  | { kind: "pglite"; dataDir: string | undefined };

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
  const parsed = environmentSchema.safeParse(env, zod3Messages);
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

function databaseConfig(e: z.infer<typeof environmentSchema>): DatabaseConfig {
  if (e.DATABASE_URL === undefined) return { kind: "pglite", dataDir: e.DATA_DIR };
  if (e.DATABASE_URL.startsWith("memory://")) return { kind: "pglite", dataDir: undefined };
  return {
    kind: "postgres",
    url: e.DATABASE_URL,
    poolSize: e.DB_POOL_SIZE,
    statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
  };
}

/** RATE_LIMIT_STORE, by default `redis` when REDIS_URL is set (README "Several nodes"). */
function rateLimitStoreOf(e: z.infer<typeof environmentSchema>) {
  const store = e.RATE_LIMIT_STORE ?? (e.REDIS_URL === undefined ? "memory" : "redis");
  if (store === "redis" && e.REDIS_URL === undefined) {
    throw new ConfigError("invalid environment: RATE_LIMIT_STORE=redis needs REDIS_URL");
  }
  return { rateLimitStore: store, redisUrl: e.REDIS_URL };
}

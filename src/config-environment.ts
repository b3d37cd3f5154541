import { z } from "zod";
import { DEADLINE_PATTERN } from "./domain/obligation.js";
import { DEFAULT_RETRY_SCHEDULE } from "./domain/webhook.js";

/**
 * A number setting: an empty or blank value (as env files often have) means unset, so that it
 * takes its default; `z.coerce.number` alone reads it as 0.
 */
const numberSetting = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema);
const positiveInt = (fallback: number) =>
  numberSetting(z.coerce.number().int().positive().default(fallback));

const optionalPostgresUrl = z.preprocess(
  (v) => (v === "" ? undefined : v),
  z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional(),
);

/** The whole environment the service reads, parsed once at start-up. */
export const environmentSchema = z.object({
  // An empty value (as env files often have) means unset.
  DATABASE_URL: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(/^(memory:\/\/|postgres(ql)?:\/\/)/, "must be memory:// or a postgres:// URL")
      .optional(),
  ),
  // Scale-out (README "Read replica", "PgBouncer"): a streaming replica for reads, and a direct
  // connection for migrations when DATABASE_URL goes through a pooler.
  DATABASE_READ_URL: optionalPostgresUrl,
  READ_REPLICA_MAX_LAG_MS: positiveInt(5_000),
  DATABASE_MIGRATION_URL: optionalPostgresUrl,
  DATA_DIR: z.string().min(1).default("./data"),
  // PostgreSQL settings for the embedded database, over the service's own (README
  // "Performance", issue 19: what the embedded database costs): `name=value`, comma-separated.
  PGLITE_SETTINGS: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .regex(
        /^\s*[a-z_]+\s*=\s*[\w.-]+(\s*,\s*[a-z_]+\s*=\s*[\w.-]+)*\s*$/,
        "must be name=value settings, comma-separated (e.g. shared_buffers=32MB,work_mem=4MB)",
      )
      .transform((text) => text.split(",").map((pair) => pair.replace(/\s+/g, "")))
      .optional(),
  ),
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
  // Connections one scorecard request may use at once (README "Configuration"), at most half
  // the pool: as many as the database server has cores to give one request.
  DB_QUERY_PARALLELISM: positiveInt(2),
  // README "PgBouncer": off for a transaction pooler that cannot keep named statements.
  DB_PREPARED_STATEMENTS: z.enum(["true", "false"]).default("true"),
  // Several nodes (README "Several nodes"): where rate limits count, how long a stopping
  // process answers 503 on /readyz while serving on, which proxies' X-Forwarded-For is believed.
  RATE_LIMIT_STORE: z.enum(["memory", "database", "redis"]).optional(),
  REDIS_URL: z.preprocess((v) => (v === "" ? undefined : v), z.string().url().optional()),
  SHUTDOWN_DRAIN_MS: numberSetting(z.coerce.number().int().nonnegative().default(0)),
  TRUST_PROXY: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()),
  REFERENCE_DATA_CHECK_MS: numberSetting(z.coerce.number().int().nonnegative().default(1_000)),
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
  PUBLIC_DEPTH_TOLERANCE: numberSetting(z.coerce.number().min(0).max(100).default(0.1)),
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

export type Environment = z.infer<typeof environmentSchema>;

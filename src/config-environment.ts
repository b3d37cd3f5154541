import { compile as compileTrustedProxies } from "@fastify/proxy-addr";
import { z } from "zod";
import { DEADLINE_PATTERN } from "./domain/obligation.js";
import { DEFAULT_RETRY_SCHEDULE } from "./domain/webhook.js";

/** A number whose text was none has this message; its bounds keep their own. */
const numberType = (message: string) =>
  z.number({ error: (issue) => (issue.code === "invalid_type" ? message : undefined) });
/**
 * A number setting, written in decimal (whole numbers as digits only): `0x50`, `1_000` or
 * `Infinity` are refused, not read as JavaScript would read them. Blank values never get
 * here (see loadConfig: they are unset).
 */
const numberSetting = <T extends z.ZodType>(digits: RegExp, schema: T) =>
  z.preprocess((v) => (typeof v === "string" && digits.test(v.trim()) ? Number(v) : v), schema);
const wholeNumber = <T extends z.ZodType>(schema: (n: z.ZodNumber) => T) =>
  numberSetting(/^-?\d+$/, schema(numberType("must be a whole number").int()));
const decimal = <T extends z.ZodType>(schema: (n: z.ZodNumber) => T) =>
  numberSetting(/^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/, schema(numberType("must be a number")));
const positiveInt = (fallback: number) => wholeNumber((n) => n.positive().default(fallback));

/** The longest delay Node's timers hold (2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * A delay in milliseconds that becomes a timer: positive (or `zero` allowed), at most `max`
 * (a clear start-up error rather than a timer that fires at once).
 */
const timerMs = (fallback: number, { max = MAX_TIMER_MS, zero = false, why = "24.8 days" } = {}) =>
  wholeNumber((n) =>
    (zero ? n.nonnegative() : n.positive())
      .max(max, `must be at most ${max} ms (${why})`)
      .default(fallback),
  );
/** A WEBHOOK_RETRY_SCHEDULE delay is at most 30 days (in seconds). */
const MAX_RETRY_DELAY_S = 30 * 24 * 60 * 60;
const port = () => wholeNumber((n) => n.min(0).max(65_535));

/**
 * A URL `new URL` can read (a port over 65535, a broken host are refused here, not at use).
 * A PostgreSQL URL may name no host (`postgresql://user:secret@/db?host=/var/run/postgresql`,
 * a Unix socket), which `pg` reads as its own parser does: with a stand-in host.
 */
const readableUrl = (v: string) => URL.canParse(v) || URL.canParse(v.replace("@/", "@localhost/"));

const optionalPostgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
  .refine(readableUrl, "must be a valid URL")
  .optional();

/**
 * TRUST_PROXY as the server reads it (comma-separated, each trimmed), checked by the very
 * matcher Fastify compiles from it: addresses, `address/prefix`, `address/netmask`, and the
 * names loopback, linklocal and uniquelocal.
 */
function isTrustedProxyList(text: string): boolean {
  try {
    compileTrustedProxies(text.split(",").map((item) => item.trim()));
    return true;
  } catch {
    return false;
  }
}

/** The whole environment the service reads, parsed once at start-up. */
export const environmentSchema = z
  .object({
    DATABASE_URL: z
      .string()
      .regex(/^(memory:\/\/|postgres(ql)?:\/\/)/, "must be memory:// or a postgres:// URL")
      .refine((v) => v.startsWith("memory://") || readableUrl(v), "must be a valid URL")
      .optional(),
    // Scale-out (README "Read replica", "PgBouncer"): a streaming replica for reads, and a direct
    // connection for migrations when DATABASE_URL goes through a pooler.
    DATABASE_READ_URL: optionalPostgresUrl,
    READ_REPLICA_MAX_LAG_MS: positiveInt(5_000),
    DATABASE_MIGRATION_URL: optionalPostgresUrl,
    DATA_DIR: z.string().min(1).default("./data"),
    // Free space DATA_DIR's disk must keep for the embedded database's writes (0: no check).
    EMBEDDED_DISK_RESERVE_MB: wholeNumber((n) => n.nonnegative().default(256)),
    // PostgreSQL settings for the embedded database, over the service's own (README
    // "Performance", issue 19: what the embedded database costs): `name=value`, comma-separated.
    PGLITE_SETTINGS: z
      .string()
      .regex(
        /^\s*[a-z_]+\s*=\s*[\w.-]+(\s*,\s*[a-z_]+\s*=\s*[\w.-]+)*\s*$/,
        "must be name=value settings, comma-separated (e.g. shared_buffers=32MB,work_mem=4MB)",
      )
      .transform((text) => text.split(",").map((pair) => pair.replace(/\s+/g, "")))
      .optional(),
    // `serve --host/--port` win over these.
    HOST: z.string().default("127.0.0.1"),
    PORT: port().default(8080),
    // Where clients reach the service (behind a proxy: its public https address); the OpenAPI
    // document's server. Default: the address the server listens on.
    PUBLIC_URL: z
      .string()
      .regex(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, "must be an http(s) URL without query")
      .refine(readableUrl, "must be a valid URL")
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
    LOG_LEVEL: z
      .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
      .default("info"),
    BODY_LIMIT_BYTES: positiveInt(2 * 1024 * 1024),
    RATE_LIMIT_PER_MINUTE: positiveInt(1200),
    MAX_IN_FLIGHT_REQUESTS: positiveInt(64),
    REQUEST_TIMEOUT_MS: timerMs(30_000),
    // Abuse limits (docs/reliability.md, "Abuse").
    IDLE_TIMEOUT_MS: timerMs(10_000),
    MAX_CONNECTIONS_PER_ADDRESS: positiveInt(64),
    MAX_EXPORTS_PER_KEY: positiveInt(2),
    RATE_LIMIT_PER_ADDRESS_PER_MINUTE: positiveInt(6000),
    AUTH_FAILURES_PER_MINUTE: positiveInt(30),
    HEALTH_PROBES_PER_ADDRESS_PER_MINUTE: positiveInt(3000),
    MAX_PROBLEMS_PER_RESPONSE: positiveInt(100),
    DB_POOL_SIZE: positiveInt(10),
    // The client's own timer waits a second longer than the server's statement timeout.
    DB_STATEMENT_TIMEOUT_MS: timerMs(15_000, {
      max: MAX_TIMER_MS - 1_000,
      why: "24.8 days less 1 s",
    }),
    DB_CONNECT_TIMEOUT_MS: timerMs(3_000),
    // Connections one scorecard request may use at once (README "Configuration"), at most half
    // the pool: as many as the database server has cores to give one request.
    DB_QUERY_PARALLELISM: positiveInt(2),
    // README "PgBouncer": off for a transaction pooler that cannot keep named statements.
    DB_PREPARED_STATEMENTS: z.enum(["true", "false"]).default("true"),
    // Several nodes (README "Several nodes"): where rate limits count, how long a stopping
    // process answers 503 on /readyz while serving on, which proxies' X-Forwarded-For is believed.
    RATE_LIMIT_STORE: z.enum(["memory", "database", "redis"]).optional(),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//i, "must be a redis:// (or rediss://) URL")
      .refine(readableUrl, "must be a valid URL")
      .optional(),
    SHUTDOWN_DRAIN_MS: timerMs(0, { zero: true }),
    TRUST_PROXY: z
      .string()
      .refine(
        isTrustedProxyList,
        "must be addresses or CIDRs, comma-separated (e.g. 10.0.0.2,10.1.0.0/16)",
      )
      .optional(),
    REFERENCE_DATA_CHECK_MS: timerMs(1_000, { zero: true }),
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
    PUBLIC_DEPTH_TOLERANCE: decimal((n) => n.min(0).max(100).default(0.1)),
    // Notifications (CONTRACT section 7; README "Notifications").
    WEBHOOK_ALLOW_INSECURE: z.enum(["true", "false"]).default("false"),
    WEBHOOK_TIMEOUT_MS: timerMs(10_000, { max: 300_000, why: "5 minutes" }),
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, "must be seconds, comma-separated (e.g. 5,300,1800)")
      .default(DEFAULT_RETRY_SCHEDULE.join(","))
      .transform((text) => text.split(",").map(Number))
      .refine((delays) => delays.every((delay) => delay <= MAX_RETRY_DELAY_S), {
        message: `must be at most ${MAX_RETRY_DELAY_S} seconds (30 days) each`,
      }),
    WEBHOOKS_PER_ORGANIZATION: positiveInt(10),
    WEBHOOK_CONCURRENCY: positiveInt(8),
    // The pause between two passes of the job raising report.missing, report.late, kpi.missed.
    WEBHOOK_EVENTS_POLL_MS: timerMs(15_000),
    // Days the submission log keeps a submission (CONTRACT section 5); reports are never purged.
    SUBMISSION_LOG_DAYS: positiveInt(400),
    // GET /metrics (README "Metrics"): a listener of its own, and/or the API's port behind a
    // Bearer token; neither set: no metrics at all.
    METRICS_PORT: port().optional(),
    METRICS_HOST: z.string().default("127.0.0.1"),
    METRICS_TOKEN: z
      .string()
      .regex(/^[\x21-\x7e]{16,}$/, "must be at least 16 printable characters, no spaces")
      .optional(),
  })
  .refine((e) => e.RATE_LIMIT_STORE !== "redis" || e.REDIS_URL !== undefined, {
    message: "RATE_LIMIT_STORE=redis needs REDIS_URL",
    path: ["RATE_LIMIT_STORE"],
    // Named beside the other bad variables, not only once they are fixed.
    when: (payload) => typeof payload.value === "object" && payload.value !== null,
  });

/**
 * The environment's values as the schema reads them: a variable set to an empty or blank
 * value (as env files often have) is unset, and takes its default.
 */
export const setVariables = (env: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ""));

export type Environment = z.infer<typeof environmentSchema>;

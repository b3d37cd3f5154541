import type { Server } from "node:http";
import { PassThrough } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { httpUrl, loadConfig } from "../config.js";
import {
  IDEMPOTENCY_PURGE_INTERVAL_MS,
  JOB_ERROR_LOG_EVERY_MS,
  MONTH_COUNT_COMPACTION_INTERVAL_MS,
  startPeriodicJob,
} from "../jobs/periodic.js";
import { quietly } from "../log-throttle.js";
import {
  DEMO_API_KEY,
  DEMO_OPERATOR_API_KEY,
  DEMO_PROJECT_API_KEY,
  demoOrganizationIds,
  loadDemo,
} from "../services/demo.js";
import type { System } from "../system.js";
import type { CommandReply, CommandRequest } from "./data-dir-owner.js";
import { type Context, type Io, openConfigured } from "./open.js";
import { startUnlessStopped, stopSignals } from "./stop-signals.js";

export type ServeOptions = {
  host?: string;
  port?: number;
  seed?: unknown;
  demo?: boolean;
  forceDemo?: boolean;
};

/** Runs one command line in this process, on its database: how `run` is reached from here. */
export type RunHere = (argv: string[], io: Io, context: Context) => Promise<number>;

/** `serve`: migrations, optional seed and demo, then the HTTP API until SIGTERM/SIGINT. */
export async function serve(given: Io, context: Context, options: ServeOptions, runHere: RunHere) {
  const io = withDemoDefaults(given, options);
  const guardDemo = options.demo === true && options.forceDemo !== true;
  if (guardDemo && loadConfig(io.env).database.kind === "postgres") {
    throw new DemoRefused(
      `--demo loads a published API key; refusing to load it into the PostgreSQL database of DATABASE_URL (${OVERRIDE})`,
    );
  }
  const signals = stopSignals();
  const { config, system, ownership } = await openConfigured(io, context, true).catch(
    signals.disposeAndRethrow,
  );
  // From here on, operator commands run by other processes on this DATA_DIR are run here.
  ownership?.accept((request) => runCommand(request, io, system, runHere));
  let draining = false;
  const app = await system.http({ level: config.logLevel, stream: io.stderr }, () => draining);
  logStoreTroubles(system, app.log);
  const host = options.host ?? config.listen.host;
  let metricsServer: Awaited<ReturnType<System["listenForMetrics"]>>;
  const steps = [
    () => (guardDemo ? refuseForeignDatabase(system) : undefined),
    () => (options.seed === undefined ? undefined : system.admin.loadFixture(options.seed)),
    () => (options.demo ? loadDemo(system.stores, system.services, new Date()) : undefined),
    () => app.listen({ host, port: options.port ?? config.listen.port }),
    async () => {
      metricsServer = await system.listenForMetrics();
    },
  ];
  const closeAll = async () => {
    await app.close();
    await system.close();
  };
  if (!(await startUnlessStopped(steps, signals, closeAll))) {
    app.log.info("stopped before serving: SIGTERM or SIGINT while starting");
    return;
  }
  const jobs = startJobs(system, app.log);
  const base = baseUrlOf(app.server, host);
  // Handlers first: a supervisor may send SIGTERM as soon as it reads the line below.
  const stopped = new Promise<void>((resolve) => {
    const stop = async () => {
      // Behind a balancer: /readyz answers 503 while this process serves on, until the
      // balancer's checks have taken it out (SHUTDOWN_DRAIN_MS); only then does it close.
      draining = true;
      if (config.shutdownDrainMs > 0) {
        app.log.info({ drainMs: config.shutdownDrainMs }, "draining before shutdown");
        await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
      }
      await app.close(); // stops accepting, lets requests in flight finish
      metricsServer?.close();
      await jobs.stop();
      await system.close();
      resolve();
    };
    signals.whenRequested(stop);
  });
  announce(io, base, config.webhooks.allowInsecure, options.demo === true);
  announceMetrics(io, metricsServer, base, config.metrics.token !== undefined);
  await stopped;
}

/** `http://HOST:PORT` of the listening server (an IPv6 host in brackets). */
function baseUrlOf(server: Server, host: string): string {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** What the stores fall back on, said once each time: lost prepared statements, no shared rate limits. */
function logStoreTroubles(system: System, log: FastifyBaseLogger) {
  system.database.preparedStatements.onLost((err) =>
    log.warn(
      { err },
      "named prepared statements lost (a transaction pooler such as PgBouncer before 1.21?): statements go unnamed from now on; DB_PREPARED_STATEMENTS=false avoids the first failure",
    ),
  );
  system.database.onDiskSpace((low, message) => (low ? log.warn(message) : log.info(message)));
  system.rateStore.listener = (reachable, err) =>
    reachable
      ? log.info("the shared rate-limit store answers again: limits are the cluster's again")
      : log.warn(
          { err },
          "the shared rate-limit store (RATE_LIMIT_STORE) does not answer: rate limits count in this process's memory until it does",
        );
}

/**
 * The background jobs of `serve`: webhook deliveries and events, the Idempotency-Key purge,
 * the month-count compaction.
 */
function startJobs(system: System, log: FastifyBaseLogger) {
  const deliveries = system.startWebhookDeliveries({
    onError: quietly(JOB_ERROR_LOG_EVERY_MS, (fields) => log.error(fields, "webhook delivery job")),
  });
  const purge = startPeriodicJob({
    run: system.services.purgeIdempotencyKeys,
    intervalMs: IDEMPOTENCY_PURGE_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, "idempotency key purge failed"),
  });
  const compaction = startPeriodicJob({
    run: system.stores.monthCounts.compact,
    intervalMs: MONTH_COUNT_COMPACTION_INTERVAL_MS,
    onError: (error) => log.warn({ err: error }, "month-count compaction failed"),
  });
  system.webhookEventProducer.start(
    quietly(JOB_ERROR_LOG_EVERY_MS, (fields) => log.error(fields, "webhook events pass failed")),
  );
  return {
    async stop() {
      await system.webhookEventProducer.stop();
      await deliveries.stop(); // lets attempts in flight end and records them
      await purge.stop();
      await compaction.stop();
    },
  };
}

/** The lines `serve` prints once it listens (the first is the one scripts wait for). */
function announce(io: Io, base: string, insecureWebhooks: boolean, demo: boolean): void {
  io.stdout.write(`listening on ${base}\n`);
  io.stdout.write(`API reference: ${base}/docs (OpenAPI document: ${base}/openapi.json)\n`);
  io.stdout.write(`Dashboard: ${base}/app (sign in with an API key)\n`);
  if (insecureWebhooks) {
    io.stdout.write(
      "WEBHOOK_ALLOW_INSECURE=true: webhooks may target http:// URLs and private, loopback and link-local addresses (development only; never in production)\n",
    );
  }
  if (demo) {
    io.stdout.write(`demo API key: ${DEMO_API_KEY}\n`);
    io.stdout.write(
      `try: curl -s -H 'Authorization: ${DEMO_API_KEY}' '${base}/api/v1/reports?pageSize=2'\n`,
    );
    io.stdout.write(
      `demo project API key (reads every market maker's reports, obligations and scorecards for its coins): ${DEMO_PROJECT_API_KEY}\n`,
    );
    io.stdout.write(
      `try: curl -s -H 'Authorization: ${DEMO_PROJECT_API_KEY}' '${base}/api/v1/scorecards'\n`,
    );
    io.stdout.write(
      `demo operator API key (reads everything; the dashboard's operator pages): ${DEMO_OPERATOR_API_KEY}\n`,
    );
    io.stdout.write(
      `dashboard: open ${base}/app and sign in with the market-maker, project or operator key above\n`,
    );
  }
}

/** Where GET /metrics answers, if anywhere (README "Metrics"). */
function announceMetrics(io: Io, server: Server | undefined, base: string, token: boolean): void {
  const address = server?.address();
  if (typeof address === "object" && address !== null) {
    io.stdout.write(`metrics: ${httpUrl(address.address, address.port)}/metrics\n`);
  }
  if (token) io.stdout.write(`metrics: ${base}/metrics (Authorization: Bearer METRICS_TOKEN)\n`);
}

/**
 * `--demo` (what `npm start` runs) is for trying the service on one machine: webhooks to a
 * receiver on this machine (http://localhost) are allowed unless WEBHOOK_ALLOW_INSECURE says
 * otherwise; `serve` prints that it is on.
 */
function withDemoDefaults(io: Io, options: ServeOptions): Io {
  if (options.demo !== true || io.env.WEBHOOK_ALLOW_INSECURE !== undefined) return io;
  return { ...io, env: { ...io.env, WEBHOOK_ALLOW_INSECURE: "true" } };
}

/**
 * The demo publishes its API key: loading it into a database that serves anything else would
 * open that database to anyone who read the README. Refused unless `--force-demo`.
 */
async function refuseForeignDatabase(system: System): Promise<void> {
  const demo = new Set(await demoOrganizationIds());
  const others = (await system.admin.listOrganizations())
    .map((o) => o.id)
    .filter((id) => !demo.has(id));
  if (others.length > 0) {
    throw new DemoRefused(
      `--demo loads a published API key; refusing a database that holds other organizations (${others.join(", ")}) (${OVERRIDE})`,
    );
  }
}

const OVERRIDE = "pass --force-demo to load it anyway";

/** A refusal of the command line as given: exit code 2. */
export class DemoRefused extends Error {}

async function runCommand(
  request: CommandRequest,
  io: Io,
  system: System,
  runHere: RunHere,
): Promise<CommandReply> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const code = await runHere(
    request.argv,
    { stdout, stderr, env: { ...io.env, ...request.env }, cwd: request.cwd },
    { argv: request.argv, shared: system.database },
  ).catch((error: unknown) => {
    err += `error: ${error instanceof Error ? error.message : String(error)}\n`;
    return 1;
  });
  // Market data or a fixture may have changed: the next request must see it.
  system.services.referenceData.invalidate();
  return { code, stdout: out, stderr: err };
}

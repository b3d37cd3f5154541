/**
 * `npm run bench [-- --quick] [-- --only postgres|pglite] [-- --<part>-only …]`: ingest, store limit, listing and
 * memory, on PostgreSQL and embedded PGlite, in one run. Writes bench/results/latest.json and
 * latest.md. Figures are compared as ratios measured side by side in the same run.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseConfig } from "../src/config.js";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { PGBOUNCER } from "../test/cluster/helpers/postgres-cluster.js";
import { adminQuery, databaseUrl } from "./admin-database.js";
import { bulkGenerate } from "./bulk.js";
import { clusterSuite } from "./cluster.js";
import { dashboardDataset, dashboardSuite } from "./dashboard.js";
import { benchFixture, INGEST_ORG, orgId, orgKey, v2Batch } from "./data.js";
import { embeddedSuite } from "./embedded.js";
import { feedbackSuite } from "./feedback.js";
import { idempotencySuite } from "./idempotency.js";
import { marketDataPause } from "./market-data-pause.js";
import { withEarlierParts } from "./merge-results.js";
import { metricsSuite } from "./metrics.js";
import { postgresCpuMeter } from "./proc-cpu.js";
import { qualitySuite } from "./quality.js";
import { markdown } from "./report.js";
import {
  type BenchResults,
  type IngestResults,
  type ListingQueryResult,
  type ListingResults,
  type Phase,
  round,
  type ScorecardQueryResult,
  type TargetResults,
} from "./results.js";
import { SCORECARD_TARGETS, scorecardDataset, scorecardQueries } from "./scorecards.js";
import { median, percentile, type RunningServer, runLoad, startServer } from "./server.js";
import { asReports, perRecordUpsert, plainUnnestUpsert, storeUpsert } from "./store-direct.js";
import { webhookSuite } from "./webhooks.js";

const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a === "postgres" || a === "pglite");
// `--<part>-only` (several allowed) runs just those parts; none: every part.
const onlyParts = process.argv.filter((a) => /^--[a-z]+-only$/.test(a)).map((a) => a.slice(2, -5));
const runs = (part: string) => onlyParts.length === 0 || onlyParts.includes(part);
const parts = {
  ingest: runs("ingest"),
  // The scorecards and the dashboard are measured over the listing's tables.
  listing: runs("listing") || runs("scorecards") || runs("dashboard"),
  webhooks: runs("webhooks"),
  idempotency: runs("idempotency"),
  // Accepted ingest beside a stream of rejected submissions (issue 15; see feedback.ts).
  feedback: runs("feedback"),
  // The quality flags' recomputation (PostgreSQL only; see quality.ts).
  quality: runs("quality"),
  metrics: runs("metrics"),
  // A market-data load's pause of submissions, at the listing's sizes (PostgreSQL only).
  marketdata: runs("marketdata"),
  // `npm start`'s memory, and PGlite ingest and memory at 1 M reports (PGlite only).
  embedded: runs("embedded"),
  // Read replica and PgBouncer on throwaway loopback clusters (bench/cluster.ts).
  cluster: runs("cluster"),
};
const BATCH = 300;
// The ingest server's webhook producer pause (see untilQuiet).
const PRODUCER_POLL_MS = 2_000;
const plan = quick
  ? {
      http1: 6,
      http4: 16,
      idempotency: 16,
      store: 16,
      perRecord: 6,
      pairedRounds: 1,
      pairedBatches: 8,
      listing: [20_000, 100_000],
      requests: 20,
      pgliteListing: [20_000],
    }
  : {
      http1: 60,
      http4: 240,
      idempotency: 240,
      store: 240,
      perRecord: 60,
      pairedRounds: 5,
      pairedBatches: 160,
      listing: [1_000_000, 10_000_000],
      requests: 200,
      pgliteListing: [1_000_000],
    };
// BENCH_LISTING_SIZES=1000000 (comma-separated) overrides the PostgreSQL listing's table sizes.
if (process.env.BENCH_LISTING_SIZES)
  plan.listing = process.env.BENCH_LISTING_SIZES.split(",").map(Number);
const log = (s: string) => process.stderr.write(`${s}\n`);

const LISTING_ORG = orgId(7);
const LISTING_QUERIES: Record<string, string> = {
  "page 1, no filter": "",
  "page 1, baseCoinId": "baseCoinId=coin-002",
  "page 1, exchangeId": "exchangeId=exchange-05",
  "page 1, dateGte": "dateGte=2025-10-01",
  "page 1, dateLte": "dateLte=2024-06-30",
  "page 1, date range": "dateGte=2024-03-15&dateLte=2025-03-15",
  "page 1, baseCoinId+exchangeId": "baseCoinId=coin-002&exchangeId=exchange-05",
  "page 1, all filters":
    "baseCoinId=coin-002&exchangeId=exchange-05&dateGte=2024-03-15&dateLte=2025-03-15",
  "page 100, no filter": "page=100",
};

execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
const work = mkdtempSync(join(tmpdir(), "trading-reports-bench-"));
const fixtureFile = join(work, "fixture.json");
writeFileSync(fixtureFile, JSON.stringify(benchFixture()));

const LATEST = "bench/results/latest.json";
// A run of one engine or of some parts completes the file of the run before (merge-results.ts).
const earlierRun: BenchResults | undefined = existsSync(LATEST)
  ? JSON.parse(readFileSync(LATEST, "utf8"))
  : undefined;
const results: BenchResults = {
  date: new Date().toISOString(),
  quick,
  machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version },
};
const writeLatest = () => {
  mkdirSync("bench/results", { recursive: true });
  const merged = withEarlierParts(earlierRun, results);
  writeFileSync(LATEST, `${JSON.stringify(merged, null, 2)}\n`);
  return merged;
};
const started = performance.now();
try {
  for (const target of ["postgres", "pglite"] as const) {
    if (only !== undefined && only !== target) continue;
    results[target] = await benchTarget(target);
    // Written after each target, so that a failure later keeps what was measured.
    writeLatest();
  }
  if (parts.cluster && only !== "pglite") {
    // A machine without PgBouncer (.ci/run installs it) keeps the cluster part of the run before.
    if (existsSync(PGBOUNCER)) results.cluster = await clusterSuite(fixtureFile, quick, log);
    else log(`cluster: skipped (no PgBouncer at ${PGBOUNCER}; apt-get install pgbouncer)`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
results.totalSeconds = round((performance.now() - started) / 1000);
const table = markdown(writeLatest());
writeFileSync("bench/results/latest.md", table);
process.stdout.write(table);

async function benchTarget(target: "postgres" | "pglite"): Promise<TargetResults> {
  log(`\n# ${target}`);
  let ingest: IngestResults | undefined;
  let listing: ListingResults | undefined;
  if (target === "postgres" && parts.quality) {
    const qualityDb = await freshTarget(target, "quality");
    results.postgresQuality = await qualitySuite(qualityDb.config, quick, log);
    await qualityDb.drop();
  }
  if (parts.ingest) {
    const ingestDb = await freshTarget(target, "ingest");
    ingest = await ingestSuite(ingestDb);
    await ingestDb.drop();
  }
  if (parts.listing || parts.marketdata) {
    const listingDb = await freshTarget(target, "listing");
    const sizes = target === "postgres" ? plan.listing : plan.pgliteListing;
    listing = await listingSuite(listingDb, sizes);
    await listingDb.drop();
  }
  let webhooks: TargetResults["webhooks"];
  if (parts.webhooks) {
    const webhookDb = await freshTarget(target, "webhooks");
    webhooks = await webhookSuite(webhookDb.env, fixtureFile, quick, log);
    await webhookDb.drop();
  }
  let idempotency: TargetResults["idempotency"];
  if (parts.idempotency) {
    const db = await freshTarget(target, "idempotency");
    const options = { batches: plan.idempotency, concurrency: 4, log };
    idempotency = await idempotencySuite(db.env, fixtureFile, options);
    await db.drop();
  }
  let metrics: TargetResults["metrics"];
  if (parts.metrics) {
    const [offDb, onDb] = [
      await freshTarget(target, "metrics_off"),
      await freshTarget(target, "metrics_on"),
    ];
    const options = { batches: plan.idempotency, concurrency: 4, log };
    metrics = await metricsSuite({ off: offDb.env, on: onDb.env }, fixtureFile, options);
    await offDb.drop();
    await onDb.drop();
  }
  const embedded =
    target === "pglite" && parts.embedded
      ? await embeddedSuite(work, {
          reports: quick ? 20_000 : 1_000_000,
          batches: plan.http4,
          log,
        })
      : undefined;
  let feedback: TargetResults["feedback"];
  if (parts.feedback) {
    const db = await freshTarget(target, "feedback");
    const server = await startServer({ ...db.env, DB_POOL_SIZE: "10" }, fixtureFile);
    try {
      const options = { batches: plan.http4, batchSize: BATCH, offset: 4_500_000 };
      feedback = await feedbackSuite(server, options);
    } finally {
      await server.stop();
      await db.drop();
    }
    log(`  accepted beside rejected / alone: ${feedback.feedbackRatio}`);
  }
  return { ingest, listing, webhooks, idempotency, feedback, metrics, embedded };
}

type Target = { env: Record<string, string>; config: DatabaseConfig; drop(): Promise<void> };

async function freshTarget(target: "postgres" | "pglite", purpose: string): Promise<Target> {
  if (target === "pglite") {
    const dir = join(work, `pglite-${purpose}`);
    return {
      env: { DATA_DIR: dir, DATABASE_URL: "" },
      config: { kind: "pglite", dataDir: dir },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `tr_bench_${purpose}_${Date.now()}`;
  await adminQuery(`create database ${name}`);
  const url = databaseUrl(name);
  return {
    env: { DATABASE_URL: url },
    config: {
      kind: "postgres",
      url,
      poolSize: 10,
      statementTimeoutMs: 600_000,
      connectTimeoutMs: 5_000,
    },
    drop: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}

function phaseOf(
  records: number,
  latencies: number[],
  elapsedMs: number,
  extra: Partial<Phase> = {},
): Phase {
  return {
    records,
    recordsPerSecond: Math.round(records / (elapsedMs / 1000)),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    ...extra,
  };
}

async function ingestSuite(target: Target): Promise<IngestResults> {
  const regions = {
    http1: 0,
    http4: 1_000_000,
    store1: 2_000_000,
    store4: 3_000_000,
    perRecord: 4_000_000,
    plain: 6_000_000,
  };
  const batches = (count: number, offset: number) =>
    Array.from({ length: count }, (_, b) => v2Batch(b, BATCH, offset));
  // The webhook producer passes every 2 s instead of 15, so that "quiet" (see untilQuiet) means
  // it has read what was stored: a pass costs the same per version either way.
  const server = await startServer(
    { ...target.env, DB_POOL_SIZE: "10", WEBHOOK_EVENTS_POLL_MS: String(PRODUCER_POLL_MS) },
    fixtureFile,
  );
  const databaseName =
    target.config.kind === "postgres" ? new URL(target.config.url).pathname.slice(1) : undefined;
  const http = async (name: string, count: number, offset: number, concurrency: number) => {
    const requests = batches(count, offset).map((data) => ({
      method: "POST",
      path: "/api/v2/report",
      body: JSON.stringify({ data }),
    }));
    const cpu0 = server.cpuSeconds();
    const postgres = databaseName === undefined ? undefined : postgresCpuMeter(databaseName);
    const r = await runLoad({
      origin: server.origin,
      key: orgKey(INGEST_ORG),
      requests,
      concurrency,
      expectStatus: 201,
    });
    const cpu = server.cpuSeconds() - cpu0;
    const perRecord = (seconds: number) => round((seconds * 1e6) / (count * BATCH), 1);
    const phase = phaseOf(count * BATCH, r.latencies, r.elapsedMs, {
      serverCpuPercent: round((cpu / (r.elapsedMs / 1000)) * 100, 0),
      nodeCpuUsPerRecord: perRecord(cpu),
      ...(postgres === undefined ? {} : { postgresCpuUsPerRecord: perRecord(postgres.seconds()) }),
      clientCpuUsPerRecord: perRecord(r.cpuSeconds),
      errors: r.errorCount,
    });
    if (r.errorCount > 0) log(`  ${name}: ${r.errorCount} errors, e.g. ${r.errors[0]}`);
    log(
      `  ${name}: ${phase.recordsPerSecond} records/s, p50 ${phase.p50Ms} ms, p99 ${phase.p99Ms} ms, Node ${phase.nodeCpuUsPerRecord} µs/record`,
    );
    return phase;
  };
  const http_1client_new = await http("http 1 client, new keys", plan.http1, regions.http1, 1);
  const http_4clients_new = await http("http 4 clients, new keys", plan.http4, regions.http4, 4);
  const http_4clients_existing = await http(
    "http 4 clients, existing keys",
    plan.http4,
    regions.http4,
    4,
  );
  const http_1client_existing = await http(
    "http 1 client, existing keys",
    plan.http1,
    regions.http1,
    1,
  );
  // One phase of each is a lottery on a shared 2-core machine (the plain phase alone has
  // measured 61k to 115k records/s from run to run): HTTP and the plain statement alternate a
  // few rounds and the median of the rounds' ratios is the figure (PostgreSQL only: the server
  // and this process cannot share a PGlite database).
  const paired =
    target.config.kind === "postgres" && databaseName !== undefined
      ? await pairedRounds(http, server, target.config, databaseName)
      : undefined;
  const serverPeakRssMb = round(server.peakRssMb(), 0);
  await server.stop();

  const database = await openDatabase(target.config);
  const direct = async (
    name: string,
    fn: typeof storeUpsert,
    count: number,
    offset: number,
    concurrency: number,
  ) => {
    const reports = batches(count, offset).map(asReports);
    const r = await fn(database.db, INGEST_ORG, reports, concurrency);
    const phase = phaseOf(count * BATCH, r.latencies, r.elapsedMs);
    log(
      `  ${name}: ${phase.recordsPerSecond} records/s, p50 ${phase.p50Ms} ms, p99 ${phase.p99Ms} ms`,
    );
    return phase;
  };
  const store_1client_new = await direct(
    "store 1 client",
    storeUpsert,
    plan.store / 4,
    regions.store1,
    1,
  );
  const store_4clients_new = await direct(
    "store 4 clients",
    storeUpsert,
    plan.store,
    regions.store4,
    4,
  );
  const perRecord_4clients_new = await direct(
    "per-record 4 clients",
    perRecordUpsert,
    plan.perRecord,
    regions.perRecord,
    4,
  );
  const plain_4clients_new = await direct(
    "plain-table unnest 4 clients",
    plainUnnestUpsert,
    plan.store,
    regions.plain,
    4,
  );
  await database.close();
  const rate = http_4clients_new.recordsPerSecond;
  return {
    http_1client_new,
    http_4clients_new,
    http_4clients_existing,
    http_1client_existing,
    serverPeakRssMb,
    store_1client_new,
    store_4clients_new,
    perRecord_4clients_new,
    plain_4clients_new,
    ratioToPlain: round(rate / plain_4clients_new.recordsPerSecond, 2),
    ...(paired === undefined ? {} : { pairedRatiosToPlain: paired }),
    ratioToStore: round(rate / store_4clients_new.recordsPerSecond, 2),
    ratioToPerRecord: round(rate / perRecord_4clients_new.recordsPerSecond, 2),
  };
}

type PairedRound = Required<NonNullable<IngestResults["pairedRatiosToPlain"]>["rounds"][number]>;

/**
 * Rounds of HTTP (4 clients, new keys) then the plain-table `unnest` upsert, each on keys of
 * its own, and each round's HTTP / plain ratio: of throughput, and of the CPU a record costs
 * on this machine. An HTTP record's CPU is the server's, its database backends' and the load
 * client's, counted until the server has gone quiet again (the webhook producer reads the
 * round's versions after it); a plain record's is its backends' and this process's, also
 * until quiet. Autovacuum's workers count on neither side (see postgresCpuMeter). On a
 * machine the work keeps busy, the throughput ratio tends to the CPU ratio; the CPU ratio
 * swings less from round to round.
 */
async function pairedRounds(
  http: (name: string, count: number, offset: number, concurrency: number) => Promise<Phase>,
  server: RunningServer,
  config: DatabaseConfig,
  databaseName: string,
): Promise<NonNullable<IngestResults["pairedRatiosToPlain"]>> {
  const database = await openDatabase(config);
  const rounds: PairedRound[] = [];
  const records = plan.pairedBatches * BATCH;
  try {
    // The earlier phases' versions are the producer's to read before the first round starts.
    const started = performance.now();
    const backlog = await untilQuiet(server, databaseName);
    log(
      `  paired rounds: the server and its backends went quiet after ${round(backlog, 1)} CPU s, ${round((performance.now() - started) / 1000, 1)} s`,
    );
    for (let r = 0; r < plan.pairedRounds; r++) {
      // Keys 5.0 M-5.8 M are used by no other phase (the key space wraps at 5.84 M); the
      // plain table's rounds follow its own phase's region.
      const offset = 5_000_000 + r * records;
      const h = await http(`paired round ${r + 1}: http`, plan.pairedBatches, offset, 4);
      const quietFrom = performance.now();
      const tail = await untilQuiet(server, databaseName);
      log(
        `  paired round ${r + 1}: after HTTP, quiet after ${round(tail, 2)} CPU s, ${round((performance.now() - quietFrom) / 1000, 1)} s`,
      );
      const httpCpuUs = round(
        (h.nodeCpuUsPerRecord ?? 0) +
          (h.postgresCpuUsPerRecord ?? 0) +
          (h.clientCpuUsPerRecord ?? 0) +
          (tail * 1e6) / records,
        1,
      );
      const reports = Array.from({ length: plan.pairedBatches }, (_, b) =>
        asReports(v2Batch(b, BATCH, 6_500_000 + r * records)),
      );
      const postgres = postgresCpuMeter(databaseName);
      const client = process.cpuUsage();
      const p = await plainUnnestUpsert(database.db, INGEST_ORG, reports, 4);
      const clientCpu = process.cpuUsage(client);
      const plainTail = await untilQuiet(server, databaseName);
      const plainCpuUs = round(
        ((postgres.seconds() + (clientCpu.user + clientCpu.system) / 1e6 + plainTail) * 1e6) /
          records,
        1,
      );
      const plain = Math.round(records / (p.elapsedMs / 1000));
      const ratio = round(h.recordsPerSecond / plain, 2);
      const cpuRatio = round(plainCpuUs / httpCpuUs, 2);
      log(
        `  paired round ${r + 1}: plain ${plain} records/s, HTTP / plain ${ratio}; CPU per record HTTP ${httpCpuUs} µs, plain ${plainCpuUs} µs, plain / HTTP ${cpuRatio}`,
      );
      rounds.push({ http: h.recordsPerSecond, plain, ratio, httpCpuUs, plainCpuUs, cpuRatio });
    }
  } finally {
    await database.close();
  }
  return {
    rounds,
    median: median(rounds.map((r) => r.ratio)),
    cpuMedian: median(rounds.map((r) => r.cpuRatio)),
  };
}

/**
 * Waits until the server and its database's backends have used under 2 % of a core over a
 * span longer than the webhook producer's pause between passes (at most 60 s), and answers
 * the CPU seconds they used meanwhile.
 */
async function untilQuiet(server: RunningServer, databaseName: string): Promise<number> {
  const postgres = postgresCpuMeter(databaseName);
  const server0 = server.cpuSeconds();
  const used = () => server.cpuSeconds() - server0 + postgres.seconds();
  const step = 250;
  const span = Math.ceil(PRODUCER_POLL_MS / step) + 2;
  const samples = [used()];
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, step));
    samples.push(used());
    const from = samples[samples.length - 1 - span];
    if (from !== undefined && (samples.at(-1) ?? 0) - from < (0.02 * span * step) / 1000) break;
  }
  return samples.at(-1) ?? 0;
}

async function listingSuite(target: Target, sizes: number[]): Promise<ListingResults> {
  const out: ListingResults = { sizes: {} };
  let have = 0;
  for (const size of sizes) {
    log(`  generating ${size} reports`);
    // The server opens the database itself; an embedded one takes a single process at a time.
    const database = await openDatabase(target.config);
    if (have === 0) {
      await migrate(database.db);
      await loadFixture(createStores(database.db), benchFixture(), new Date());
    }
    await bulkGenerate(database.db, have, size, log);
    if (have === 0) await scorecardDataset(database.db, log);
    if (have === 0) await dashboardDataset(database.db, log);
    await database.close();
    have = size;
    const server = await startServer(target.env);
    // After the listing's requests: the load changes some reports' eligibility.
    const pause = () =>
      parts.marketdata && target.config.kind === "postgres"
        ? pauseAt(server, target, size)
        : undefined;
    if (!parts.listing) {
      out.sizes[String(size)] = { queries: {}, marketDataPause: await pause(), serverPeakRssMb: 0 };
      await server.stop();
      continue;
    }
    const queries: Record<string, ListingQueryResult> = {};
    for (const [name, query] of Object.entries(runs("listing") ? LISTING_QUERIES : {})) {
      const path = `/api/v1/reports${query ? `?${query}` : ""}`;
      const requests = Array.from({ length: plan.requests }, () => ({ method: "GET", path }));
      const warm = await runLoad({
        origin: server.origin,
        key: orgKey(LISTING_ORG),
        requests: requests.slice(0, 5),
        concurrency: 1,
        expectStatus: 200,
      });
      const r = await runLoad({
        origin: server.origin,
        key: orgKey(LISTING_ORG),
        requests,
        concurrency: 1,
        expectStatus: 200,
      });
      const totalCount = await fetch(`${server.origin}${path}`, {
        headers: { authorization: orgKey(LISTING_ORG) },
      })
        .then((res) => res.json() as Promise<{ totalCount: number }>)
        .then((b) => b.totalCount);
      queries[name] = {
        p50Ms: round(percentile(r.latencies, 50)),
        p99Ms: round(percentile(r.latencies, 99)),
        requests: r.latencies.length,
        totalCount,
        errors: r.errorCount + warm.errorCount,
      };
      log(
        `  ${size} ${name}: p50 ${round(percentile(r.latencies, 50))} ms, p99 ${round(percentile(r.latencies, 99))} ms, totalCount ${totalCount}`,
      );
    }
    // Before the suites that follow (scorecards, dashboard), which hold larger answers.
    const listingPeakRssMb = round(server.peakRssMb(), 0);
    const scorecards = runs("scorecards") ? await scorecardSuite(server, size) : undefined;
    const dashboard = runs("dashboard")
      ? await dashboardSuite(server, plan.requests, log)
      : undefined;
    out.sizes[String(size)] = {
      queries,
      scorecards,
      dashboard,
      marketDataPause: await pause(),
      listingPeakRssMb,
      serverPeakRssMb: round(server.peakRssMb(), 0),
    };
    await server.stop();
  }
  if (sizes.length === 2) {
    const [small, large] = sizes.map((s) => out.sizes[String(s)]?.queries);
    const growth: Record<string, number> = {};
    for (const name of Object.keys(LISTING_QUERIES)) {
      const a = small?.[name];
      const b = large?.[name];
      if (a && b) growth[name] = round(b.p50Ms / a.p50Ms, 2);
    }
    out.growthP50 = growth;
  }
  return out;
}

/** A market-data load changing one market, beside a submission stream (market-data-pause.ts). */
async function pauseAt(server: RunningServer, target: Target, size: number) {
  const database = await openDatabase(target.config);
  try {
    // A new collection start each size (so that the load changes the market), keys of their own.
    const first = size === plan.listing[0];
    const collectedSince = first ? "2024-02-01" : "2024-03-01";
    // A later snapshot of the same day each size, so that each load changes it.
    const depthTakenAt = first ? "2024-06-01T10:00:00Z" : "2024-06-01T11:00:00Z";
    const keyOffset = 7_000_000 + plan.listing.indexOf(size) * 1_000_000;
    const r = await marketDataPause(server, database, { keyOffset, collectedSince, depthTakenAt });
    log(
      `  ${size} market-data load: ${r.loadMs} ms, longest submission stall ${r.longestStallMs} ms; public-depth load ${r.depth?.loadMs} ms, stall ${r.depth?.longestStallMs} ms`,
    );
    return r;
  } finally {
    await database.close();
  }
}

/** The scorecard requests at one table size, each sent `plan.requests` times after 5 warm-ups. */
async function scorecardSuite(
  server: RunningServer,
  size: number,
): Promise<Record<string, ScorecardQueryResult>> {
  const out: Record<string, ScorecardQueryResult> = {};
  for (const [name, { path, key }] of Object.entries(scorecardQueries())) {
    const requests = Array.from({ length: plan.requests }, () => ({ method: "GET", path }));
    const warm = await runLoad({
      origin: server.origin,
      key,
      requests: requests.slice(0, 5),
      concurrency: 1,
      expectStatus: 200,
    });
    const r = await runLoad({
      origin: server.origin,
      key,
      requests,
      concurrency: 1,
      expectStatus: 200,
    });
    const items = await fetch(`${server.origin}${path}`, { headers: { authorization: key } })
      .then((res) => res.json() as Promise<{ items: unknown[] }>)
      .then((b) => b.items.length);
    out[name] = {
      p50Ms: round(percentile(r.latencies, 50)),
      p99Ms: round(percentile(r.latencies, 99)),
      requests: r.latencies.length,
      items,
      targetP99Ms: SCORECARD_TARGETS[name],
      errors: r.errorCount + warm.errorCount,
    };
    log(
      `  ${size} scorecards, ${name}: p50 ${out[name].p50Ms} ms, p99 ${out[name].p99Ms} ms, ${items} items`,
    );
  }
  return out;
}

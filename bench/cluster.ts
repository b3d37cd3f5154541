/**
 * Scale-out, side by side on throwaway loopback clusters (issue 17; README "Read replica",
 * "PgBouncer"): the listing served by one primary vs by a primary and its streaming replica,
 * and ingest through PgBouncer (transaction mode) vs a direct connection. The two sides of
 * each pair alternate in rounds, each going first in every other round, so that the machine's
 * other load falls on both alike. Every process shares this machine's cores: the replica adds
 * no CPU here, so its figure to watch is the share of the database work it took off the primary.
 */
import pg from "pg";
import { type Cluster, startCluster } from "../test/cluster/helpers/postgres-cluster.js";
import { INGEST_ORG, orgKey, v2Batch } from "./data.js";
import { round } from "./results.js";
import { percentile, type RunningServer, runLoad, startServer } from "./server.js";

export type ClusterSide = { perSecond: number; p50Ms: number; p99Ms: number; errors: number };

export type ClusterBenchResults = {
  ingest: { direct: ClusterSide; pgbouncer: ClusterSide; ratio: number };
  listing: {
    primaryOnly: ClusterSide;
    withReplica: ClusterSide;
    ratio: number;
    /**
     * The replica's statement time over both servers' (pg_stat_database.active_time), while
     * the replica was in use: how much of the listing's database work left the primary.
     */
    replicaShareOfQueryTime: number;
  };
};

const BATCH = 300;
const CONCURRENCY = 4;
const INGEST_TARGET = 0.8;

type Load = { latencies: number[]; elapsedMs: number; errorCount: number };
type Request = { method: "GET" | "POST"; path: string; body?: string };

export async function clusterSuite(
  fixtureFile: string,
  quick: boolean,
  log: (line: string) => void,
): Promise<ClusterBenchResults> {
  log("\n# cluster (primary, streaming replica, PgBouncer on loopback)");
  const cluster = await startCluster({ replica: true, pgbouncer: true });
  const servers: RunningServer[] = [];
  try {
    await cluster.admin("create database bench");
    const start = async (env: Record<string, string>, seed?: string) => {
      // The event producer's first pass runs at start, before any measuring; no other one.
      const quiet = { DB_POOL_SIZE: "10", WEBHOOK_EVENTS_POLL_MS: "3600000" };
      const server = await startServer({ ...quiet, ...env }, seed);
      servers.push(server);
      return server;
    };
    const direct = await start({ DATABASE_URL: cluster.primaryUrl("bench") }, fixtureFile);
    const pooled = await start({
      DATABASE_URL: cluster.pgbouncerUrl("bench"),
      DATABASE_MIGRATION_URL: cluster.primaryUrl("bench"),
    });
    const replicated = await start({
      DATABASE_URL: cluster.primaryUrl("bench"),
      DATABASE_READ_URL: cluster.replicaUrl("bench"),
    });
    const ingest = await ingestPair(direct, pooled, quick ? 2 : 8, log);
    await pooled.stop();
    await cluster.replicaCaughtUp();
    const listing = await listingPair(cluster, direct, replicated, quick ? 2 : 6, log);
    return { ingest, listing };
  } finally {
    for (const server of servers) await server.stop();
    await cluster.stop();
  }
}

const load = (server: RunningServer, requests: Request[], expectStatus: number) =>
  runLoad({
    origin: server.origin,
    key: orgKey(INGEST_ORG),
    requests,
    concurrency: CONCURRENCY,
    expectStatus,
  });

async function ingestPair(
  direct: RunningServer,
  pooled: RunningServer,
  rounds: number,
  log: (line: string) => void,
) {
  const perRound = CONCURRENCY * 4;
  const totals = { direct: [] as Load[], pgbouncer: [] as Load[] };
  const batches = (r: number, offset: number): Request[] =>
    Array.from({ length: perRound }, (_, b) => ({
      method: "POST",
      path: "/api/v2/report",
      body: JSON.stringify({ data: v2Batch(r * perRound + b, BATCH, offset) }),
    }));
  for (let r = 0; r < rounds; r++) {
    const turns = [
      async () => totals.direct.push(await load(direct, batches(r, 0), 201)),
      async () => totals.pgbouncer.push(await load(pooled, batches(r, 5_000_000), 201)),
    ];
    for (const turn of r % 2 ? turns.reverse() : turns) await turn();
  }
  const sides = {
    direct: sideOf(totals.direct, BATCH),
    pgbouncer: sideOf(totals.pgbouncer, BATCH),
  };
  const ratio = round(sides.pgbouncer.perSecond / sides.direct.perSecond, 3);
  for (const [name, s] of Object.entries(sides)) {
    log(`  ingest ${name}: ${s.perSecond} records/s, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms`);
  }
  log(`  ingest through PgBouncer / direct = ${ratio}`);
  return { ...sides, ratio };
}

async function listingPair(
  cluster: Cluster,
  primaryOnly: RunningServer,
  replicated: RunningServer,
  rounds: number,
  log: (line: string) => void,
) {
  const requests: Request[] = Array.from({ length: 100 }, (_, i) => ({
    method: "GET",
    path: `/api/v1/reports?pageSize=100&page=${1 + (i % 20)}${i % 3 === 0 ? "&baseCoinId=coin-001" : ""}`,
  }));
  const totals = { primaryOnly: [] as Load[], withReplica: [] as Load[] };
  const busy = { primary: 0, replica: 0 };
  for (let r = 0; r < rounds; r++) {
    const turns = [
      async () => totals.primaryOnly.push(await load(primaryOnly, requests, 200)),
      async () => {
        const before = await activeMs(cluster);
        totals.withReplica.push(await load(replicated, requests, 200));
        // A backend that goes idle within a second of its last report holds its statistics
        // back for up to 10 s (PostgreSQL 15's PGSTAT_IDLE_INTERVAL): wait that out, or the
        // pooled connections' last statements are missing from the figures.
        await new Promise((resolve) => setTimeout(resolve, 11_000));
        const after = await activeMs(cluster);
        busy.primary += after.primary - before.primary;
        busy.replica += after.replica - before.replica;
      },
    ];
    for (const turn of r % 2 ? turns.reverse() : turns) await turn();
  }
  const sides = {
    primaryOnly: sideOf(totals.primaryOnly, 1),
    withReplica: sideOf(totals.withReplica, 1),
  };
  const ratio = round(sides.withReplica.perSecond / sides.primaryOnly.perSecond, 3);
  const share = round(busy.replica / Math.max(1, busy.primary + busy.replica), 3);
  for (const [name, s] of Object.entries(sides)) {
    log(`  listing ${name}: ${s.perSecond} requests/s, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms`);
  }
  log(`  listing with replica / primary only = ${ratio}; replica's share of query time ${share}`);
  return { ...sides, ratio, replicaShareOfQueryTime: share };
}

/** Milliseconds spent running statements in the benchmark's database, on each server. */
async function activeMs(cluster: Cluster): Promise<{ primary: number; replica: number }> {
  const read = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const r = await client.query(
        "select active_time as n from pg_stat_database where datname = 'bench'",
      );
      return Number(r.rows[0]?.n ?? 0);
    } finally {
      await client.end();
    }
  };
  return { primary: await read(cluster.primaryUrl()), replica: await read(cluster.replicaUrl()) };
}

function sideOf(loads: Load[], unitsPerRequest: number): ClusterSide {
  const latencies = loads.flatMap((l) => l.latencies);
  const elapsedMs = loads.reduce((sum, l) => sum + l.elapsedMs, 0);
  return {
    perSecond: Math.round((latencies.length * unitsPerRequest) / (elapsedMs / 1000)),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    errors: loads.reduce((sum, l) => sum + l.errorCount, 0),
  };
}

/** The Markdown of these figures for bench/results/latest.md. */
export function clusterLines(r: ClusterBenchResults): string[] {
  const row = (name: string, unit: string, s: ClusterSide) =>
    `| ${name} | ${s.perSecond} ${unit} | ${s.p50Ms} | ${s.p99Ms} | ${s.errors} |`;
  const verdict = (ok: boolean) => (ok ? "met" : "missed");
  return [
    "### cluster: scale-out on loopback (one machine: every server shares its cores)",
    "",
    "| side | throughput | p50 ms | p99 ms | errors |",
    "|---|---:|---:|---:|---:|",
    row("ingest, direct", "records/s", r.ingest.direct),
    row("ingest, through PgBouncer", "records/s", r.ingest.pgbouncer),
    row("listing, one primary", "requests/s", r.listing.primaryOnly),
    row("listing, primary + replica", "requests/s", r.listing.withReplica),
    "",
    `Ingest through PgBouncer / direct: ${r.ingest.ratio} (target >= ${INGEST_TARGET}: ${verdict(r.ingest.ratio >= INGEST_TARGET)})`,
    `Listing with replica / one primary: ${r.listing.ratio}; the replica's share of statement time: ${r.listing.replicaShareOfQueryTime} (authentication stays on the primary; no target: on one machine the replica adds no CPU)`,
    "",
  ];
}

/** What `npm run bench` measures, as written to bench/results/latest.json. */

import type { ClusterBenchResults } from "./cluster.js";
import type { EmbeddedResults } from "./embedded.js";
import type { FeedbackResults } from "./feedback.js";
import type { IdempotencyResults } from "./idempotency.js";
import type { MarketDataPauseResult } from "./market-data-pause.js";
import type { MetricsBenchResults } from "./metrics.js";
import type { QualityBenchResults } from "./quality.js";
import type { WebhookBenchResults } from "./webhooks.js";

/** One ingest phase: throughput and per-batch latency. */
export type Phase = {
  records: number;
  recordsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuPercent?: number;
  /** The server process's CPU time (user + system, from /proc) per record, in µs. */
  nodeCpuUsPerRecord?: number;
  /** The CPU time of the database's backends per record, in µs (PostgreSQL on this machine). */
  postgresCpuUsPerRecord?: number;
  /** The load client's CPU time per record while it sent, in µs. */
  clientCpuUsPerRecord?: number;
  errors?: number;
};

export type IngestResults = {
  http_1client_new: Phase;
  http_4clients_new: Phase;
  http_4clients_existing: Phase;
  http_1client_existing: Phase;
  serverPeakRssMb: number;
  store_1client_new: Phase;
  store_4clients_new: Phase;
  perRecord_4clients_new: Phase;
  /** A plain table of the same shape, one `unnest` upsert per batch: the database's limit. */
  plain_4clients_new?: Phase;
  /** HTTP over the plain-table `unnest` upsert, 4 clients, new keys (issue 19 target: 0.6). */
  ratioToPlain?: number;
  /**
   * HTTP and the plain statement in alternating rounds: each round's records/s and their
   * ratio, the CPU a record cost on each path (µs: server, backends and load client; backends
   * and the benchmark's own process) and plain / HTTP of it; the medians of both ratios.
   */
  pairedRatiosToPlain?: {
    rounds: {
      http: number;
      plain: number;
      ratio: number;
      httpCpuUs?: number;
      plainCpuUs?: number;
      cpuRatio?: number;
    }[];
    median: number;
    cpuMedian?: number;
  };
  /** HTTP over direct store calls, 4 clients, new keys (1 = no HTTP overhead). */
  ratioToStore: number;
  /** HTTP over one statement per record, 4 clients, new keys. */
  ratioToPerRecord: number;
};

export type ListingQueryResult = {
  p50Ms: number;
  p99Ms: number;
  requests: number;
  totalCount: number;
  errors: number;
};

/** One scorecard request (bench/scorecards.ts), measured like a listing query. */
export type ScorecardQueryResult = {
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Items in the answer (obligation markets, or market-days for /daily). */
  items: number;
  /** The p99 target for this request, when it has one. */
  targetP99Ms?: number;
  errors: number;
};

/** The dashboard's pages served (by name), and a two-year market page drawn in Chromium. */
export type DashboardResults = {
  pages: Record<
    string,
    {
      p50Ms: number;
      p99Ms: number;
      requests: number;
      kilobytes: number;
      targetP99Ms: number;
      errors: number;
    }
  >;
  render:
    | { runs: number; points: number; medianMs: number; maxMs: number; targetMs: number }
    | { skipped: string };
};

/** The listing at one table size: each query of LISTING_QUERIES by name. */
export type ListingAtSize = {
  queries: Record<string, ListingQueryResult>;
  /** GET /api/v1/scorecards(/daily) over the scorecard part of the dataset, by name. */
  scorecards?: Record<string, ScorecardQueryResult>;
  /** The dashboard's pages (bench/dashboard.ts). */
  dashboard?: DashboardResults;
  /** A market-data load changing one market, beside a submission stream (PostgreSQL). */
  marketDataPause?: MarketDataPauseResult;
  /** The server's peak resident memory once the listing's queries were answered, MB. */
  listingPeakRssMb?: number;
  /** Its peak over the whole suite at this size: scorecards, dashboard and pause included. */
  serverPeakRssMb: number;
};

export type ListingResults = {
  /** By table size (number of reports). */
  sizes: Record<string, ListingAtSize>;
  /** p50 at the larger size over p50 at the smaller one, by query (with two sizes). */
  growthP50?: Record<string, number>;
};

export type TargetResults = {
  ingest?: IngestResults;
  listing?: ListingResults;
  embedded?: EmbeddedResults;
  webhooks?: WebhookBenchResults;
  idempotency?: IdempotencyResults;
  metrics?: MetricsBenchResults;
  feedback?: FeedbackResults;
};

export type BenchResults = {
  date: string;
  quick: boolean;
  machine: { cores: number; cpu: string | undefined; node: string };
  postgres?: TargetResults;
  pglite?: TargetResults;
  /** bench/quality.ts (PostgreSQL only). */
  postgresQuality?: QualityBenchResults;
  /** bench/cluster.ts: read replica and PgBouncer, side by side. */
  cluster?: ClusterBenchResults;
  totalSeconds?: number;
  /**
   * The parts this run did not measure, kept from the file of an earlier run (see
   * merge-results.ts), by name (`postgres.listing.10000000.scorecards`), with when they were
   * measured.
   */
  earlierParts?: Record<string, string>;
};

/** `n` rounded to `digits` decimals, as every table of the benchmark shows figures. */
export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

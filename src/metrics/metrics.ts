import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";
import { fallbackCode, PROBLEM_CODE_NAMES } from "../domain/problem-codes.js";
import type { SchemaVersion } from "../domain/report.js";
import type { SubmissionMeter } from "../services/submission-meter.js";
import { type MetricsSources, registerSampledMetrics } from "./sampled.js";

export type { MetricsSources };

/** Latency buckets (seconds): a health probe's 1 ms to a 1000-record batch's seconds. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The route label of a request no route matched (404s): one series, whatever the URL. */
const UNMATCHED_ROUTE = "unmatched";

/**
 * The service's Prometheus metrics (README "Metrics"). Counting is exact and cheap: one cached
 * child per label set, incremented once per request or submission, never per record; the
 * figures that are states (pool, reference data, replica lag) are read when scraped.
 */
export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Histogram({
    name: "trading_reports_http_request_duration_seconds",
    help: "HTTP requests by method, route pattern and status: latency (and, as _count, rate)",
    labelNames: ["method", "route", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const submissionCounters = registerSubmissionCounters(registry);
  registerSampledMetrics(registry, sources);
  const byRequestLabels = new Map<string, Histogram.Internal<"method" | "route" | "status">>();
  return {
    /** One answered request; `route` is the route's pattern (undefined: no route matched). */
    observeRequest(method: string, route: string | undefined, status: number, seconds: number) {
      const key = `${method} ${route} ${status}`;
      let child = byRequestLabels.get(key);
      if (child === undefined) {
        child = requests.labels(method, route ?? UNMATCHED_ROUTE, String(status));
        byRequestLabels.set(key, child);
      }
      child.observe(seconds);
    },
    submissions: submissionCounters,
    contentType: registry.contentType,
    /**
     * The exposition text of every metric (reads the sampled ones now). prom-client writes an
     * unknown value as `Nan`; the text format's word is `NaN`, which strict parsers require.
     */
    scrape: async () => (await registry.metrics()).replace(/ Nan$/gm, " NaN"),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Submissions, records and problems: the SubmissionMeter the submission services call. */
function registerSubmissionCounters(registry: Registry): SubmissionMeter {
  const registers = [registry];
  const submissions = new Counter({
    name: "trading_reports_submissions_total",
    help: "Submissions by API version, outcome (accepted, rejected, replayed) and dry run",
    labelNames: ["version", "outcome", "dry_run"] as const,
    registers,
  });
  const records = new Counter({
    name: "trading_reports_records_total",
    help: "Records by API version, outcome (created, updated, rejected) and dry run; accepted = created + updated",
    labelNames: ["version", "outcome", "dry_run"] as const,
    registers,
  });
  const problems = new Counter({
    name: "trading_reports_problems_total",
    help: "Problems answered to rejected submissions, by API version and problem code",
    labelNames: ["version", "code"] as const,
    registers,
  });
  // Every series exists from the start (at 0): rate() and the dashboard need no first event.
  for (const version of ["1", "2"]) {
    for (const dryRun of ["false", "true"]) {
      for (const outcome of ["accepted", "rejected"])
        submissions.inc({ version, outcome, dry_run: dryRun }, 0);
      for (const outcome of ["created", "updated", "rejected"])
        records.inc({ version, outcome, dry_run: dryRun }, 0);
    }
    submissions.inc({ version, outcome: "replayed", dry_run: "false" }, 0);
    for (const code of PROBLEM_CODE_NAMES) problems.inc({ version, code }, 0);
  }
  const labels = (version: SchemaVersion, dryRun: boolean) => ({
    version: String(version),
    dry_run: String(dryRun),
  });
  return {
    accepted(version, dryRun, result) {
      const l = labels(version, dryRun);
      submissions.inc({ ...l, outcome: "accepted" });
      records.inc({ ...l, outcome: "created" }, result.createdCount);
      records.inc({ ...l, outcome: "updated" }, result.updatedCount);
    },
    rejected(version, dryRun, recordCount, found) {
      const l = labels(version, dryRun);
      submissions.inc({ ...l, outcome: "rejected" });
      records.inc({ ...l, outcome: "rejected" }, recordCount);
      for (const problem of found)
        problems.inc({ version: l.version, code: problem.code ?? fallbackCode(problem.path) });
    },
    replayed(version) {
      submissions.inc({ version: String(version), outcome: "replayed", dry_run: "false" });
    },
  };
}

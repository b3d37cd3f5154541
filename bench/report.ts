import { clusterLines } from "./cluster.js";
import { dashboardLines } from "./dashboard.js";
import { embeddedLines } from "./embedded.js";
import { feedbackLines } from "./feedback.js";
import { idempotencyLines } from "./idempotency.js";
import { marketDataPauseLines } from "./market-data-pause.js";
import { metricsLines } from "./metrics.js";
import { qualityLines } from "./quality.js";
import type {
  BenchResults,
  IngestResults,
  ListingResults,
  Phase,
  ScorecardQueryResult,
} from "./results.js";
import { webhookLines } from "./webhooks.js";

const TARGETS = ["postgres", "pglite"] as const;

/** The results as the Markdown of bench/results/latest.md (and the README's performance section). */
export function markdown(r: BenchResults): string {
  const lines = [
    `## Benchmark ${r.quick ? "(quick)" : ""} ${r.date}`,
    "",
    `Machine: ${JSON.stringify(r.machine)}; total ${r.totalSeconds} s`,
    "",
    ...earlierPartLines(r.earlierParts),
  ];
  for (const target of TARGETS) {
    const t = r[target];
    if (t === undefined) continue;
    if (t.ingest !== undefined) lines.push(...ingestLines(target, t.ingest));
    if (t.listing !== undefined) lines.push(...listingLines(target, t.listing));
    if (t.webhooks !== undefined) lines.push(...webhookLines(target, t.webhooks));
    if (t.idempotency !== undefined) lines.push(...idempotencyLines(target, t.idempotency));
    if (t.metrics !== undefined) lines.push(...metricsLines(target, t.metrics));
    if (t.embedded !== undefined) lines.push(...embeddedLines(t.embedded));
    if (t.feedback !== undefined) lines.push(...feedbackLines(target, t.feedback));
  }
  if (r.postgresQuality !== undefined) lines.push(...qualityLines("postgres", r.postgresQuality));
  if (r.cluster !== undefined) lines.push(...clusterLines(r.cluster));
  return `${lines.join("\n")}\n`;
}

/** The parts not measured by this run, kept from earlier runs, and when each was measured. */
function earlierPartLines(earlier: BenchResults["earlierParts"]): string[] {
  if (earlier === undefined) return [];
  return [
    "Not measured by this run, kept from earlier runs of the same mode on this machine:",
    "",
    ...Object.entries(earlier).map(([part, date]) => `- ${part}: ${date}`),
    "",
  ];
}

function ingestLines(target: string, ingest: IngestResults): string[] {
  const lines = [
    `### ${target}: ingest (v2 batches of 300)`,
    "",
    "| phase | records/s | p50 ms | p99 ms | server CPU % | Node µs/record |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const [name, v] of Object.entries(ingest)) {
    if (typeof v !== "object" || !("recordsPerSecond" in v)) continue;
    const p: Phase = v;
    lines.push(
      `| ${name} | ${p.recordsPerSecond} | ${p.p50Ms} | ${p.p99Ms} | ${p.serverCpuPercent ?? ""} | ${p.nodeCpuUsPerRecord ?? ""} |`,
    );
  }
  lines.push(
    "",
    ...ingestTargetLines(ingest),
    `HTTP/store ratio (4 clients, new keys): ${ingest.ratioToStore}; HTTP/per-record ratio: ${ingest.ratioToPerRecord}; server peak RSS ${ingest.serverPeakRssMb} MB`,
    "",
  );
  return lines;
}

/** The listing's queries at one size, and the server's peak memory. */
function listingQueryLines(
  target: string,
  size: string,
  atSize: ListingResults["sizes"][string],
): string[] {
  const lines = [
    `### ${target}: GET /api/v1/reports at ${Number(size).toLocaleString("en")} records`,
    "",
    "| query | p50 ms | p99 ms | totalCount |",
    "|---|---:|---:|---:|",
  ];
  for (const [name, q] of Object.entries(atSize.queries)) {
    lines.push(`| ${name} | ${q.p50Ms} | ${q.p99Ms} | ${q.totalCount} |`);
  }
  const listingPeak =
    atSize.listingPeakRssMb === undefined
      ? ""
      : `after the listing's queries ${atSize.listingPeakRssMb} MB, `;
  lines.push(
    "",
    `server peak RSS: ${listingPeak}over the whole suite ${atSize.serverPeakRssMb} MB`,
    "",
  );
  return lines;
}

function listingLines(target: string, listing: ListingResults): string[] {
  const lines: string[] = [];
  for (const [size, atSize] of Object.entries(listing.sizes)) {
    if (atSize.marketDataPause !== undefined)
      lines.push(...marketDataPauseLines(size, atSize.marketDataPause));
    if (Object.keys(atSize.queries).length > 0)
      lines.push(...listingQueryLines(target, size, atSize));
    if (atSize.scorecards !== undefined)
      lines.push(...scorecardLines(target, size, atSize.scorecards));
    if (atSize.dashboard !== undefined)
      lines.push(...dashboardLines(target, size, atSize.dashboard));
  }
  if (listing.growthP50 !== undefined)
    lines.push(
      `Growth of p50 from the smaller to the larger table: ${JSON.stringify(listing.growthP50)}`,
      "",
    );
  return lines;
}

function scorecardLines(
  target: string,
  size: string,
  scorecards: Record<string, ScorecardQueryResult>,
): string[] {
  const lines = [
    `### ${target}: scorecards at ${Number(size).toLocaleString("en")} records (20 market makers x 20 markets x 366 days)`,
    "",
    "| request | p50 ms | p99 ms | items | p99 target ms |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const [name, q] of Object.entries(scorecards)) {
    const target =
      q.targetP99Ms === undefined
        ? ""
        : `${q.targetP99Ms} ${q.p99Ms <= q.targetP99Ms ? "(met)" : "(missed)"}`;
    lines.push(`| ${name} | ${q.p50Ms} | ${q.p99Ms} | ${q.items} | ${target} |`);
  }
  lines.push("");
  return lines;
}

const met = (ok: boolean) => (ok ? "met" : "missed");

/** Issue 19's targets: HTTP >= 60 % of the plain-table `unnest` limit, Node <= 15 µs/record. */
function ingestTargetLines(ingest: IngestResults): string[] {
  const http = ingest.http_4clients_new;
  const lines: string[] = [];
  const paired = ingest.pairedRatiosToPlain;
  if (ingest.ratioToPlain !== undefined)
    lines.push(
      `HTTP / plain-table unnest (4 clients, new keys), the phases above: ${ingest.ratioToPlain}${paired === undefined ? ` (target >= 0.6: ${met(ingest.ratioToPlain >= 0.6)})` : ""}`,
      "",
    );
  if (paired !== undefined) {
    const ratios = paired.rounds.map((r) => r.ratio);
    lines.push(
      `HTTP / plain-table unnest in ${ratios.length} alternating rounds: median ${paired.median} (rounds ${ratios.join(", ")}; HTTP ${paired.rounds.map((r) => r.http).join(", ")}, plain ${paired.rounds.map((r) => r.plain).join(", ")} records/s) (target >= 0.6: ${met(paired.median >= 0.6)})`,
      "",
    );
    if (paired.cpuMedian !== undefined)
      lines.push(
        `CPU per record in the same rounds, plain / HTTP: median ${paired.cpuMedian} (rounds ${paired.rounds.map((r) => r.cpuRatio).join(", ")}; HTTP ${paired.rounds.map((r) => r.httpCpuUs).join(", ")} µs: server, backends, load client; plain ${paired.rounds.map((r) => r.plainCpuUs).join(", ")} µs: backends, benchmark process)`,
        "",
      );
  }
  if (http.postgresCpuUsPerRecord !== undefined)
    lines.push(
      `CPU per record on the HTTP path (4 clients, new keys): server ${http.nodeCpuUsPerRecord} µs, database backends ${http.postgresCpuUsPerRecord} µs, load client ${http.clientCpuUsPerRecord} µs`,
      "",
    );
  if (http.nodeCpuUsPerRecord !== undefined)
    lines.push(
      `Node CPU per record on the HTTP path (4 clients, new keys): ${http.nodeCpuUsPerRecord} µs (target <= 15: ${http.nodeCpuUsPerRecord <= 15 ? "met" : "missed"})`,
      "",
    );
  return lines;
}

import { readFileSync } from "node:fs";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { System } from "../src/system.js";
import { onPostgres } from "./helpers/database.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { METRICS_TOKEN, metricNamesOf, samplesOf, startMetricsSystem } from "./helpers/metrics.js";

let system: System;
let app: FastifyInstance;
beforeAll(async () => {
  ({ system } = await startMetricsSystem({ METRICS_TOKEN }));
  app = await system.http(false);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await system?.close();
});

function post(version: 1 | 2, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: "POST",
    url: `/api/v${version}/report`,
    headers: { authorization: KEYS.acme, "content-type": "application/json", ...headers },
    payload: typeof body === "string" ? body : JSON.stringify({ data: body }),
  });
}

async function scrape(): Promise<Map<string, number>> {
  const response = await app.inject({
    url: "/metrics",
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.statusCode).toBe(200);
  expect(response.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  return samplesOf(response.body);
}

const expectStatus = (response: LightMyRequestResponse, status: number) =>
  expect(response.statusCode, response.body).toBe(status);

/** A known workload: what every answer was is checked, so the counts below are its counts. */
async function runWorkload(): Promise<void> {
  const day = (d: number) => `2025-02-${String(d).padStart(2, "0")}`;
  const v2 = [1, 2, 3].map((d) => v2Record({ date: day(d) }));
  expectStatus(await post(2, v2), 201); // created 3
  expectStatus(
    await post(
      2,
      v2.map((r) => ({ ...r, bidDepth50: 4001 })),
    ),
    201,
  ); // updated 3
  // Rejected: two records, three problems (a negative depth, an unknown exchange twice over).
  const bad = [
    v2Record({ date: day(4), bidDepth50: -1 }),
    v2Record({ date: day(5), exchangeId: "nowhere" }),
  ];
  expectStatus(await post(2, bad), 400);
  const v1 = [v1Record({ date: day(10) }), v1Record({ date: day(11) })];
  expectStatus(await post(1, v1), 201); // created 2
  expectStatus(await post(1, [v1[0], v1Record({ date: day(12) })]), 201); // created 1, updated 1
  // Dry runs count under dry_run="true": created 1 and updated 1 that would be, 1 rejected.
  const dryRun = { "x-dry-run": "true" };
  expectStatus(await post(1, [v1[1], v1Record({ date: day(13) })], dryRun), 201);
  expectStatus(await post(2, [v2Record({ date: "2025-02-30" })], dryRun), 400);
  expectStatus(await post(1, "{not json"), 400); // rejected, no record counted
  // Under an Idempotency-Key: accepted once (created 1), then replayed (no record counted).
  const keyed = { "idempotency-key": "metrics-workload-1" };
  expectStatus(await post(2, [v2Record({ date: day(20) })], keyed), 201);
  expectStatus(await post(2, [v2Record({ date: day(20) })], keyed), 201);
  // Not submissions: no key (401), a key that may not submit is not in this fixture.
  expectStatus(await post(2, v2, { authorization: "" }), 401);
  expectStatus(
    await app.inject({
      url: "/api/v1/reports?pageSize=1&exchangeId=binance",
      headers: { authorization: KEYS.acme },
    }),
    200,
  );
  expectStatus(
    await app.inject({ url: "/api/v1/reports?pageSize=2", headers: { authorization: KEYS.acme } }),
    200,
  );
  expectStatus(await app.inject({ url: "/no/such/path/12345" }), 404);
  expectStatus(await app.inject({ url: "/no/such/path/67890" }), 404);
  // Paths the router cannot decode are answered before any hook: counted all the same.
  expectStatus(await app.inject({ url: "/%zz" }), 404);
  expectStatus(await app.inject({ url: "/api/v1/%E0%A4%A" }), 404);
}

describe("GET /metrics counts a known workload exactly", () => {
  let samples: Map<string, number>;
  let pendingAtScrape: number;
  beforeAll(async () => {
    await runWorkload();
    samples = await scrape();
    pendingAtScrape = await system.stores.monthCounts.pending();
  });

  const records = (version: number, outcome: string, dryRun: boolean) =>
    samples.get(
      `trading_reports_records_total{dry_run="${dryRun}",outcome="${outcome}",version="${version}"}`,
    );
  const submissions = (version: number, outcome: string, dryRun: boolean) =>
    samples.get(
      `trading_reports_submissions_total{dry_run="${dryRun}",outcome="${outcome}",version="${version}"}`,
    );

  it("counts records created, updated and rejected by version, dry runs apart", () => {
    expect(records(2, "created", false)).toBe(4);
    expect(records(2, "updated", false)).toBe(3);
    expect(records(2, "rejected", false)).toBe(2);
    expect(records(1, "created", false)).toBe(3);
    expect(records(1, "updated", false)).toBe(1);
    expect(records(1, "rejected", false)).toBe(0);
    expect(records(1, "created", true)).toBe(1);
    expect(records(1, "updated", true)).toBe(1);
    expect(records(2, "rejected", true)).toBe(1);
    expect(records(2, "created", true)).toBe(0);
  });

  it("counts submissions by version and outcome; a replay is not counted as accepted", () => {
    expect(submissions(2, "accepted", false)).toBe(3);
    expect(submissions(2, "rejected", false)).toBe(1);
    expect(submissions(2, "replayed", false)).toBe(1);
    expect(submissions(1, "accepted", false)).toBe(2);
    expect(submissions(1, "rejected", false)).toBe(1);
    expect(submissions(1, "accepted", true)).toBe(1);
    expect(submissions(2, "rejected", true)).toBe(1);
  });

  it("counts problems by code", () => {
    const problems = (version: number, code: string) =>
      samples.get(`trading_reports_problems_total{code="${code}",version="${version}"}`);
    expect(problems(2, "below_minimum")).toBe(1);
    expect(problems(2, "unknown_exchange")).toBe(1);
    expect(problems(2, "invalid_date")).toBe(1);
    expect(problems(1, "malformed_json")).toBe(1);
    expect(problems(1, "required")).toBe(0);
    const total = [...samples].filter(([k]) => k.startsWith("trading_reports_problems_total{"));
    expect(total.reduce((sum, [, v]) => sum + v, 0)).toBe(4);
  });

  it("counts requests by route pattern and status, never by raw URL", () => {
    const count = (method: string, route: string, status: number) =>
      samples.get(
        `trading_reports_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`,
      );
    expect(count("POST", "/api/v2/report", 201)).toBe(4);
    expect(count("POST", "/api/v2/report", 400)).toBe(2);
    expect(count("POST", "/api/v2/report", 401)).toBe(1);
    expect(count("POST", "/api/v1/report", 201)).toBe(3);
    expect(count("POST", "/api/v1/report", 400)).toBe(1);
    expect(count("GET", "/api/v1/reports", 200)).toBe(2);
    expect(count("GET", "unmatched", 404)).toBe(4);
    expect([...samples.keys()].some((k) => k.includes("12345") || k.includes("pageSize"))).toBe(
      false,
    );
  });

  it("reports the database pool, the reference data and the event loop", () => {
    const max = samples.get("trading_reports_db_pool_max_connections");
    expect(max).toBe(onPostgres ? 10 : 1);
    expect(samples.get("trading_reports_db_pool_acquires_total")).toBeGreaterThan(10);
    expect(samples.get("trading_reports_db_pool_wait_seconds_total")).toBeGreaterThanOrEqual(0);
    expect(samples.get('trading_reports_db_pool_connections{state="active"}')).toBe(0);
    expect(samples.get("trading_reports_db_pool_waiting_clients")).toBe(0);
    // Named on PostgreSQL (DB_PREPARED_STATEMENTS defaults on), never on PGlite.
    expect(samples.get("trading_reports_db_prepared_statements")).toBe(onPostgres ? 1 : 0);
    expect(samples.get("trading_reports_reference_data_version")).toBeGreaterThan(0);
    expect(samples.get("trading_reports_reference_data_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(samples.get("trading_reports_market_data_last_sync_timestamp_seconds")).toBeNaN();
    expect(samples.has("nodejs_eventloop_lag_p99_seconds")).toBe(true);
    // No compaction job runs here (serve runs it): every batch that created reports waits.
    expect(pendingAtScrape).toBeGreaterThan(0);
    expect(samples.get("trading_reports_month_count_deltas_pending")).toBe(pendingAtScrape);
    // No replica configured: no lag figure at all.
    expect([...samples.keys()].some((k) => k.startsWith("trading_reports_replica_lag"))).toBe(
      false,
    );
  });

  it("shows the last market-data sync once one completed", async () => {
    const at = new Date("2026-01-02T03:04:05Z");
    await system.stores.operator.markSynced(at);
    const after = await scrape();
    expect(after.get("trading_reports_market_data_last_sync_timestamp_seconds")).toBe(
      at.getTime() / 1000,
    );
  });
});

/** The metric names a PromQL expression uses (a histogram's series by the histogram's name). */
function metricNamesIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:trading_reports|nodejs|process)_\w+)/g)].map((m) =>
    (m[1] as string).replace(/_(bucket|count|sum)$/, ""),
  );
}

describe("a scrape with a replica configured", () => {
  it("has the provider's replica lag, and every metric the Grafana dashboard uses", async () => {
    const { system: withReplica } = await startMetricsSystem(
      { METRICS_TOKEN },
      { replicaLagSeconds: () => 1.5 },
    );
    const replicaApp = await withReplica.http(false);
    try {
      const response = await replicaApp.inject({
        url: "/metrics",
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(samplesOf(response.body).get("trading_reports_replica_lag_seconds")).toBe(1.5);
      const dashboard = JSON.parse(readFileSync("docs/grafana-dashboard.json", "utf8")) as {
        panels: { title: string; targets: { expr: string }[] }[];
      };
      const used = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricNamesIn(t.expr)));
      expect(used.length).toBeGreaterThan(12);
      const exported = metricNamesOf(response.body);
      expect([...new Set(used)].filter((name) => !exported.has(name))).toEqual([]);
    } finally {
      await replicaApp.close();
      await withReplica.close();
    }
  });
});

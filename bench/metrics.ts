/**
 * Ingest with GET /metrics on (METRICS_TOKEN set: every request and submission counted)
 * beside the same ingest with metrics off, on two servers at once, alternating in rounds so
 * that drift and the machine's other load fall on both alike (issue 17: metrics cost < 5 %).
 * The counters are then read back: they must equal the records sent, exactly.
 */
import { INGEST_ORG, orgKey, v2Batch } from "./data.js";
import { type Phase, round } from "./results.js";
import { percentile, type RunningServer, runLoad, startServer } from "./server.js";

export type MetricsBenchResults = {
  off: Phase;
  on: Phase;
  /** Records/s with metrics over records/s without (1 = no cost; target >= 0.95). */
  ratio: number;
  /** trading_reports_records_total{outcome="created"} after the run equals the records sent. */
  countedExactly: boolean;
};

const BATCH = 300;
const TOKEN = "bench-metrics-token-0123456789";

export async function metricsSuite(
  targets: { off: Record<string, string>; on: Record<string, string> },
  fixtureFile: string,
  options: { batches: number; concurrency: number; log: (line: string) => void },
): Promise<MetricsBenchResults> {
  const off = await startServer({ ...targets.off, DB_POOL_SIZE: "10" }, fixtureFile);
  const on = await startServer(
    { ...targets.on, DB_POOL_SIZE: "10", METRICS_TOKEN: TOKEN },
    fixtureFile,
  );
  const perRound = options.concurrency * 2;
  const rounds = Math.max(2, Math.round(options.batches / perRound));
  const runs = { off: [] as Run[], on: [] as Run[] };
  try {
    for (let r = 0; r < rounds; r++) {
      const requests = Array.from({ length: perRound }, (_, b) => ({
        method: "POST",
        path: "/api/v2/report",
        body: JSON.stringify({ data: v2Batch(r * perRound + b, BATCH, 0) }),
      }));
      const load = (server: RunningServer) =>
        runLoad({
          origin: server.origin,
          key: orgKey(INGEST_ORG),
          requests,
          concurrency: options.concurrency,
          expectStatus: 201,
        });
      const turns = [
        async () => runs.off.push(await load(off)),
        async () => runs.on.push(await load(on)),
      ];
      for (const turn of r % 2 ? turns.reverse() : turns) await turn();
    }
    const created = await createdCounted(on.origin);
    const phases = { off: phaseOf(runs.off), on: phaseOf(runs.on) };
    const ratio = round(phases.on.recordsPerSecond / phases.off.recordsPerSecond, 3);
    const countedExactly = created === phases.on.records;
    options.log(
      `  metrics: on ${phases.on.recordsPerSecond} records/s, off ${phases.off.recordsPerSecond}, on/off = ${ratio}; counted ${created} of ${phases.on.records}`,
    );
    return { ...phases, ratio, countedExactly };
  } finally {
    await off.stop();
    await on.stop();
  }
}

type Run = { latencies: number[]; elapsedMs: number; errorCount: number };

function phaseOf(runs: Run[]): Phase {
  const latencies = runs.flatMap((r) => r.latencies);
  const elapsedMs = runs.reduce((sum, r) => sum + r.elapsedMs, 0);
  const records = latencies.length * BATCH;
  return {
    records,
    recordsPerSecond: Math.round(records / (elapsedMs / 1000)),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    errors: runs.reduce((sum, r) => sum + r.errorCount, 0),
  };
}

async function createdCounted(origin: string): Promise<number> {
  const response = await fetch(`${origin}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const line = (await response.text())
    .split("\n")
    .find((l) =>
      l.startsWith('trading_reports_records_total{version="2",outcome="created",dry_run="false"}'),
    );
  return Number(line?.split(" ").at(-1) ?? Number.NaN);
}

/** The Markdown of these figures for bench/results/latest.md. */
export function metricsLines(target: string, r: MetricsBenchResults): string[] {
  const verdict = r.ratio >= 0.95 && r.countedExactly ? "met" : "missed";
  return [
    `### ${target}: ingest with GET /metrics on vs off (v2 batches of ${BATCH}, side by side)`,
    "",
    "| metrics | records/s | p50 ms | p99 ms |",
    "|---|---:|---:|---:|",
    `| off | ${r.off.recordsPerSecond} | ${r.off.p50Ms} | ${r.off.p99Ms} |`,
    `| on | ${r.on.recordsPerSecond} | ${r.on.p50Ms} | ${r.on.p99Ms} |`,
    "",
    `On/off: ${r.ratio} (target >= 0.95, counters exact: ${r.countedExactly}): ${verdict}`,
    "",
  ];
}

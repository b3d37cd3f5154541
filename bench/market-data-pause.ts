/**
 * Issue 19, goal 3: how long a market-data load that changes one market holds submissions
 * back. A submission stream (one client, batches of 50 new keys) runs while the load commits;
 * its longest request is the stall. PostgreSQL only: an embedded database has one process.
 */
import { loadFixture } from "../src/services/fixtures.js";
import type { Database } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { coinId, exchangeId, INGEST_ORG, orgKey, v2Batch } from "./data.js";
import type { RunningServer } from "./server.js";

const STREAM_BATCH = 50;
export const PAUSE_TARGET_MS = 1000;

export type MarketDataPauseResult = {
  /** The load (one changed market) from start to commit. */
  loadMs: number;
  eligibilityChanged: number;
  /** The submission stream's longest request while the load ran, and its median. */
  longestStallMs: number;
  streamP50Ms: number;
  submissions: number;
  errors: number;
};

export async function marketDataPause(
  server: RunningServer,
  database: Database,
  options: { keyOffset: number; collectedSince: string },
): Promise<MarketDataPauseResult> {
  const latencies: number[] = [];
  let errors = 0;
  let stop = false;
  const stream = (async () => {
    for (let b = 0; !stop; b++) {
      const t0 = performance.now();
      const res = await fetch(`${server.origin}/api/v2/report`, {
        method: "POST",
        headers: { authorization: orgKey(INGEST_ORG), "content-type": "application/json" },
        body: JSON.stringify({ data: v2Batch(b, STREAM_BATCH, options.keyOffset) }),
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status !== 201) errors++;
    }
  })();
  await sleep(1000);
  const started = performance.now();
  const summary = await loadFixture(
    createStores(database.db),
    { markets: [changedMarket(options)] },
    new Date(),
  );
  const loadMs = performance.now() - started;
  await sleep(1000);
  stop = true;
  await stream;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    loadMs: Math.round(loadMs),
    eligibilityChanged: summary.eligibilityChanged,
    longestStallMs: Math.round(sorted.at(-1) ?? 0),
    streamP50Ms: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    submissions: latencies.length,
    errors,
  };
}

/** One market of the bench fixture, its collection start moved (so the load changes it). */
function changedMarket(options: { collectedSince: string }) {
  return {
    exchangeId: exchangeId(3),
    baseCoinId: coinId(5),
    quoteCoinId: "tether",
    quoteSymbol: "USDT",
    instrumentType: "spot" as const,
    collectedSince: options.collectedSince,
  };
}

export function marketDataPauseLines(size: string, r: MarketDataPauseResult): string[] {
  const met = r.longestStallMs <= PAUSE_TARGET_MS ? "met" : "missed";
  return [
    `Market-data load changing one market at ${Number(size).toLocaleString("en-US")} reports: load ${r.loadMs} ms (${r.eligibilityChanged} reports changed eligibility); a concurrent submission stream's longest stall ${r.longestStallMs} ms (median ${r.streamP50Ms} ms, ${r.submissions} submissions, ${r.errors} errors; target <= ${PAUSE_TARGET_MS} ms: ${met})`,
    "",
  ];
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

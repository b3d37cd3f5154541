/**
 * Issue 19, goal 3: how long a market-data load that changes one market holds submissions
 * back; and, beside it, a public-depth load that changes one market-day (it waits for the
 * submissions in flight before recomputing `exceeds_public_depth`, quality-depth-store.ts).
 * A submission stream (one client, batches of 50 new keys) runs while each load commits; its
 * longest request is the stall. PostgreSQL only: an embedded database has one process.
 */
import { loadFixture } from "../src/services/fixtures.js";
import type { Database } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { coinId, exchangeId, INGEST_ORG, orgKey, v2Batch } from "./data.js";
import type { RunningServer } from "./server.js";

const STREAM_BATCH = 50;
export const PAUSE_TARGET_MS = 1000;

/** A load beside the submission stream: its time, and the stream's while it ran. */
export type StallResult = {
  /** The load from start to end (its recomputation after the commit included). */
  loadMs: number;
  /** The submission stream's longest request while the load ran, and its median. */
  longestStallMs: number;
  streamP50Ms: number;
  submissions: number;
  errors: number;
};

export type MarketDataPauseResult = StallResult & {
  eligibilityChanged: number;
  /** A public-depth load changing one market-day (runs since session 18). */
  depth?: StallResult;
};

export async function marketDataPause(
  server: RunningServer,
  database: Database,
  options: { keyOffset: number; collectedSince: string; depthTakenAt: string },
): Promise<MarketDataPauseResult> {
  const stores = createStores(database.db);
  let eligibilityChanged = 0;
  const market = await besideStream(server, options.keyOffset, async () => {
    const summary = await loadFixture(stores, { markets: [changedMarket(options)] }, new Date());
    eligibilityChanged = summary.eligibilityChanged;
  });
  const depth = await besideStream(server, options.keyOffset + 500_000, async () => {
    await loadFixture(
      stores,
      { depthSnapshots: [depthSnapshot(options.depthTakenAt)] },
      new Date(),
    );
  });
  return { ...market, eligibilityChanged, depth };
}

/** Runs `load` one second into a submission stream that goes on one second after it. */
async function besideStream(
  server: RunningServer,
  keyOffset: number,
  load: () => Promise<void>,
): Promise<StallResult> {
  const latencies: number[] = [];
  let errors = 0;
  let stop = false;
  const stream = (async () => {
    for (let b = 0; !stop; b++) {
      const t0 = performance.now();
      const res = await fetch(`${server.origin}/api/v2/report`, {
        method: "POST",
        headers: { authorization: orgKey(INGEST_ORG), "content-type": "application/json" },
        body: JSON.stringify({ data: v2Batch(b, STREAM_BATCH, keyOffset) }),
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status !== 201) errors++;
    }
  })();
  await sleep(1000);
  const started = performance.now();
  await load();
  const loadMs = performance.now() - started;
  await sleep(1000);
  stop = true;
  await stream;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    loadMs: Math.round(loadMs),
    longestStallMs: Math.round(sorted.at(-1) ?? 0),
    streamP50Ms: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    submissions: latencies.length,
    errors,
  };
}

const MARKET = { exchangeId: exchangeId(3), baseCoinId: coinId(5), quoteSymbol: "USDT" };

/** One market of the bench fixture, its collection start moved (so the load changes it). */
function changedMarket(options: { collectedSince: string }) {
  return {
    ...MARKET,
    quoteCoinId: "tether",
    instrumentType: "spot" as const,
    collectedSince: options.collectedSince,
  };
}

/** That market's public depth on the day of `takenAt`, below every report's (all flagged). */
function depthSnapshot(takenAt: string) {
  return {
    ...MARKET,
    date: takenAt.slice(0, 10),
    takenAt,
    costToMoveDownUsd: 1,
    costToMoveUpUsd: 1,
  };
}

export function marketDataPauseLines(size: string, r: MarketDataPauseResult): string[] {
  const met = (stall: number) => (stall <= PAUSE_TARGET_MS ? "met" : "missed");
  const stream = (s: StallResult) =>
    `a concurrent submission stream's longest stall ${s.longestStallMs} ms (median ${s.streamP50Ms} ms, ${s.submissions} submissions, ${s.errors} errors; target <= ${PAUSE_TARGET_MS} ms: ${met(s.longestStallMs)})`;
  const at = `at ${Number(size).toLocaleString("en-US")} reports`;
  const lines = [
    `Market-data load changing one market ${at}: load ${r.loadMs} ms (${r.eligibilityChanged} reports changed eligibility); ${stream(r)}`,
    "",
  ];
  if (r.depth !== undefined)
    lines.push(
      `Public-depth load changing one market-day ${at} (waits for the submissions in flight, then recomputes the day's flags): load ${r.depth.loadMs} ms; ${stream(r.depth)}`,
      "",
    );
  return lines;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

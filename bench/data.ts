import { METRICS } from "../src/domain/report.js";
import type { Fixture } from "../src/schemas/fixture.js";
import { scorecardOrganizations } from "./scorecards.js";

/** The benchmark's world: 200 base coins, 40 exchanges, 50 organizations (CONTRACT fixture). */
export const COINS = 200;
export const EXCHANGES = 40;
export const ORGANIZATIONS = 50;
export const DAYS = 730;
export const FIRST_DATE = "2024-01-01";

export const coinId = (i: number) => `coin-${String(i).padStart(3, "0")}`;
export const exchangeId = (i: number) => `exchange-${String(i).padStart(2, "0")}`;
export const orgId = (i: number) => `org-${String(i).padStart(2, "0")}`;
export const orgKey = (id: string) => `bench-key-${id}-0123456789abcdef`;
export const INGEST_ORG = "bench-ingest";

export function benchFixture(): Fixture {
  const coins = [
    { id: "tether", symbol: "USDT", name: "Tether" },
    ...Array.from({ length: COINS }, (_, i) => ({
      id: coinId(i),
      symbol: `C${i}`,
      name: `Coin ${i}`,
    })),
  ];
  const exchanges = Array.from({ length: EXCHANGES }, (_, i) => ({
    id: exchangeId(i),
    name: `Exchange ${i}`,
    spot: true,
    derivatives: i % 4 === 0,
    marketData: true,
  }));
  const markets = exchanges.flatMap((e, ei) =>
    Array.from({ length: COINS }, (_, ci) => ({
      exchangeId: e.id,
      baseCoinId: coinId(ci),
      quoteCoinId: "tether",
      quoteSymbol: "USDT",
      instrumentType: "spot" as const,
      collectedSince: (ei + ci) % 10 === 0 ? "2025-06-01" : "2024-01-01",
    })),
  );
  const engagedCoins = (o: number) =>
    // Each organization is engaged for 150 of the 200 coins (engagement scoping matters).
    Array.from({ length: COINS }, (_, c) => c).filter((c) => (c + o) % 4 !== 0);
  const organizations = [
    ...Array.from({ length: ORGANIZATIONS }, (_, o) => ({
      id: orgId(o),
      name: `Organization ${o}`,
      apiKeys: [orgKey(orgId(o))],
      engagements: engagedCoins(o).map((c) => ({
        baseCoinId: coinId(c),
        type: "project" as const,
        since: FIRST_DATE,
        until: null,
      })),
    })),
    { id: INGEST_ORG, name: "Ingest", apiKeys: [orgKey(INGEST_ORG)], engagements: [] },
    ...scorecardOrganizations(),
  ];
  return { coins, exchanges, markets, organizations };
}

/** A deterministic PRNG (mulberry32), so runs send the same bodies. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * Batch `b` of `size` realistic v2 records with keys no other batch has: record k of the run
 * is coin k % 200 on exchange (k / 200) % 40 on day k / 8000. Their figures are random but
 * hang together as a real book's do (see `plausible`), so that they raise no quality flag:
 * drawn independently, nearly every record was implausible, and the webhook producer, which
 * reads into the process every version that changes its report's flags, read all of them.
 */
export function v2Batch(b: number, size: number, keyOffset = 0): Record<string, unknown>[] {
  const next = random(b + 1);
  return Array.from({ length: size }, (_, j) => {
    const k = keyOffset + b * size + j;
    const record: Record<string, unknown> = {
      date: addDays(FIRST_DATE, Math.floor(k / (COINS * EXCHANGES)) % DAYS),
      exchangeId: exchangeId(Math.floor(k / COINS) % EXCHANGES),
      baseCoinId: coinId(k % COINS),
      quoteCoinId: "tether",
      instrumentType: "spot",
      type: "project",
    };
    for (const metric of METRICS) {
      record[metric] =
        metric === "bidAskSpread" || metric === "topOfBookPercentage"
          ? Math.round(next() * 10_000) / 100
          : Math.round(next() * 1e8) / 100;
    }
    return plausible(record);
  });
}

const DEPTH_BANDS = ["DepthTob", "Depth10", "Depth25", "Depth50", "Depth100", "Depth200"];

/**
 * The record's figures made consistent (CONTRACT section 6): each side's depth grows with the
 * band (the drawn values, sorted), each total is its two sides, and the maker volume at the
 * top of the book is within the maker volume.
 */
function plausible(record: Record<string, unknown>): Record<string, unknown> {
  for (const side of ["bid", "ask"]) {
    const depths = DEPTH_BANDS.map((band) => record[`${side}${band}`] as number);
    depths.sort((a, b) => a - b);
    DEPTH_BANDS.forEach((band, i) => {
      record[`${side}${band}`] = depths[i];
    });
  }
  for (const band of ["50", "100", "200"]) {
    const sides = (record[`bidDepth${band}`] as number) + (record[`askDepth${band}`] as number);
    record[`bidAskDepth${band}`] = Math.round(sides * 100) / 100;
  }
  record.orderFillVolumeMakerTob = Math.min(
    record.orderFillVolumeMakerTob as number,
    record.orderFillVolumeMaker as number,
  );
  return record;
}

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCoinGeckoClient } from "../src/adapters/coingecko-client.js";
import { createAdminServices } from "../src/services/admin.js";
import { recomputePublicDepthFlags } from "../src/services/quality-recompute.js";
import { createStores } from "../src/store/stores.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import {
  depthSnapshot,
  loadDepthSnapshots,
  qualityFlagsOn,
  withDepth200,
} from "./helpers/public-depth.js";
import { submitAll } from "./helpers/reports.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const snapshot = depthSnapshot;
const loadSnapshots = (snapshots: unknown[], stores = t.database.stores) =>
  loadDepthSnapshots(stores, snapshots);
const flagsOn = (date: string) => qualityFlagsOn(t, date);

describe("exceeds_public_depth", () => {
  it("flips when a snapshot arrives after the report, and back when a later one says otherwise", async () => {
    await submitAll(t, KEYS.acme, [withDepth200("2025-03-01", 6000)]);
    expect(await flagsOn("2025-03-01")).toEqual([]);

    const first = {
      takenAt: "2025-03-01T10:00:00Z",
      costToMoveDownUsd: 5000,
      costToMoveUpUsd: 9000,
    };
    await loadSnapshots([snapshot("2025-03-01", first)]);
    expect(await flagsOn("2025-03-01")).toEqual(["exceeds_public_depth"]);

    // A snapshot taken earlier that day arrives late: the latest taken still wins, both are kept.
    const earlier = { takenAt: "2025-03-01T08:00:00Z", costToMoveDownUsd: 90000 };
    await loadSnapshots([snapshot("2025-03-01", earlier)]);
    expect(await flagsOn("2025-03-01")).toEqual(["exceeds_public_depth"]);

    const later = {
      takenAt: "2025-03-01T22:00:00Z",
      costToMoveDownUsd: 8000,
      costToMoveUpUsd: 9000,
    };
    await loadSnapshots([snapshot("2025-03-01", later)]);
    expect(await flagsOn("2025-03-01")).toEqual([]);
    const kept = await sql<{ n: number }>`
      select count(*)::int as n from public_depth_snapshots where day = '2025-03-01'`.execute(
      t.database.db,
    );
    expect(kept.rows[0]?.n).toBe(3);
  });

  it("is set at ingest when the day's snapshot is already there, on either side", async () => {
    await loadSnapshots([
      snapshot("2025-03-02", { costToMoveDownUsd: 5000, costToMoveUpUsd: 5000 }),
      snapshot("2025-03-03", { costToMoveDownUsd: 5000, costToMoveUpUsd: 5000 }),
      snapshot("2025-03-04", { costToMoveDownUsd: 5000, costToMoveUpUsd: 5000 }),
    ]);
    await submitAll(t, KEYS.acme, [
      // 5000 × 1.1 is the limit: at it, no flag; above it, the flag.
      withDepth200("2025-03-02", 5500, 5500),
      withDepth200("2025-03-03", 5500.01, 5500),
      withDepth200("2025-03-04", 5500, 5500.01),
    ]);
    expect(await flagsOn("2025-03-02")).toEqual([]);
    expect(await flagsOn("2025-03-03")).toEqual(["exceeds_public_depth"]);
    expect(await flagsOn("2025-03-04")).toEqual(["exceeds_public_depth"]);
    const versions = await sql<{ quality_flags: number }>`
      select v.quality_flags from report_versions v join reports r on r.id = v.report_id
      where r.organization_id = 'acme' and r.date = '2025-03-03'`.execute(t.database.db);
    expect(versions.rows).toEqual([{ quality_flags: 8 }]);
  });

  it("honours PUBLIC_DEPTH_TOLERANCE at the boundary", async () => {
    const quarter = createStores(t.database.db, { publicDepthTolerance: 0.25 });
    await submitAll(t, KEYS.acme, [withDepth200("2025-03-05", 6000)]);
    await loadSnapshots([snapshot("2025-03-05", { costToMoveDownUsd: 4800 })], quarter);
    expect(await flagsOn("2025-03-05")).toEqual([]); // 4800 × 1.25 = 6000: not more
    await loadSnapshots(
      [snapshot("2025-03-05", { takenAt: "2025-03-05T12:00:00Z", costToMoveDownUsd: 4799.99 })],
      quarter,
    );
    expect(await flagsOn("2025-03-05")).toEqual(["exceeds_public_depth"]);
  });

  it("raises nothing when the snapshot has no depth (older CoinGecko plans)", async () => {
    await loadSnapshots([snapshot("2025-03-06", { volumeUsd: 1e6, bidAskSpreadPercentage: 0.1 })]);
    await submitAll(t, KEYS.acme, [withDepth200("2025-03-06", 1e9, 1e9)]);
    expect(await flagsOn("2025-03-06")).toEqual([]);
  });

  it("keeps the other flags when it changes", async () => {
    await submitAll(t, KEYS.acme, [v2Record({ date: "2025-03-07", bidAskDepth200: 1 })]);
    await loadSnapshots([snapshot("2025-03-07", { costToMoveDownUsd: 1 })]);
    expect(await flagsOn("2025-03-07")).toEqual(["total_depth_mismatch", "exceeds_public_depth"]);
  });
});

describe("recomputation over many reports", () => {
  it("reaches every report when its ranges grow", async () => {
    // 12,000 reports of globex (dates from 1990 on), each above its day's public depth.
    await sql`insert into reports (organization_id, date, exchange_id, base_coin_id, quote_key,
        instrument_type, quote_coin_id, type, schema_version, bid_depth_50, bid_depth_100,
        bid_depth_200, ask_depth_50, ask_depth_100, ask_depth_200, bid_ask_depth_50,
        bid_ask_depth_100, bid_ask_depth_200, bid_ask_spread, order_fill_volume_maker,
        order_fill_volume_taker, eligibility_status)
      select 'globex', date '1990-01-01' + i, 'binance', 'chainlink', 'tether', 'spot', 'tether',
        'project', 2, 1, 2, 3, 1, 2, 3, 2, 4, 6, 0.1, 1, 1, 'eligible'
      from generate_series(0, 11999) as g(i)`.execute(t.database.db);
    await sql`insert into public_depth_days (exchange_id, base_coin_id, instrument_type,
        quote_symbol, day, quote_coin_id, taken_at, cost_to_move_up_usd, cost_to_move_down_usd)
      select 'binance', 'chainlink', 'spot', 'USDT', date '1990-01-01' + i, 'tether', now(), 1, 1
      from generate_series(0, 11999) as g(i)`.execute(t.database.db);
    // A target no range reaches: each range is twice the last (5,000, 10,000, …).
    const result = await recomputePublicDepthFlags(t.database.stores, { targetMs: 1e9 });
    expect(result.changed).toBe(12_000);
    const unflagged = await sql<{ n: number }>`
      select count(*)::int as n from reports
      where organization_id = 'globex' and date < '2030-01-01' and quality_flags & 8 = 0`.execute(
      t.database.db,
    );
    expect(unflagged.rows[0]?.n).toBe(0);
  });
});

describe("fixture depthSnapshots", () => {
  it("loads once: the same file again changes nothing", async () => {
    const file = [snapshot("2025-04-01", { costToMoveDownUsd: 1000 })];
    expect((await loadSnapshots(file)).changed).toBe(1);
    expect((await loadSnapshots(file)).changed).toBe(0);
  });

  it("refuses the whole file, naming each bad entry", async () => {
    const bad = loadSnapshots([
      snapshot("2025-04-02", { costToMoveDownUsd: 1 }),
      snapshot("2025-04-02", { exchangeId: "kraken" }),
      snapshot("2025-04-02", { costToMoveDownUsd: 2 }),
      snapshot("2025-04-02", { costToMoveUpUsd: -1 }),
      snapshot("2025-04-02", { takenAt: "2025-04-03T00:00:00Z" }),
    ]);
    await expect(bad).rejects.toMatchObject({
      problems: [
        { path: "depthSnapshots.3.costToMoveUpUsd", message: expect.any(String) },
        { path: "depthSnapshots.4.takenAt", message: "takenAt must fall on date (UTC)" },
        { path: "depthSnapshots.1", message: "unknown market kraken chainlink/USDT (spot)" },
        { path: "depthSnapshots.2", message: "duplicate of depthSnapshots.0" },
      ],
    });
    const stored = await sql<{ n: number }>`
      select count(*)::int as n from public_depth_snapshots where day = '2025-04-02'`.execute(
      t.database.db,
    );
    expect(stored.rows[0]?.n).toBe(0);
  });
});

describe("market-data sync --depth-only", () => {
  let server: Server;
  let baseUrl: string;
  const requests: URL[] = [];
  const ticker = {
    base: "LINK",
    target: "USDT",
    market: { name: "Binance", identifier: "binance", has_trading_incentive: false },
    converted_volume: { btc: 10, eth: 300, usd: 2_500_000 },
    bid_ask_spread_percentage: 0.05,
    last_fetch_at: "2025-05-01T09:30:00+00:00",
    coin_id: "chainlink",
    target_coin_id: "tether",
  };
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      requests.push(url);
      const depth = url.searchParams.get("depth") === "true";
      const tickers = url.pathname.endsWith("/exchanges/binance/tickers")
        ? [depth ? { ...ticker, cost_to_move_up_usd: 7000, cost_to_move_down_usd: 5000 } : ticker]
        : [];
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: "x", tickers }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("asks only for the tickers of stored spot markets, with depth, and flags the day's reports", async () => {
    await submitAll(t, KEYS.acme, [withDepth200("2025-05-01", 6000)]);
    const admin = createAdminServices(t.database.stores, {
      now: () => new Date("2025-05-01T10:00:00Z"),
      coinGecko: () => createCoinGeckoClient({ baseUrl, sleep: async () => {} }),
    });
    const summary = await admin.quality.syncDepthSnapshots({ exchangeIds: ["binance"] });
    expect(summary).toEqual({
      exchanges: 1,
      snapshots: 1,
      daysChanged: 1,
      flagsChanged: 1,
      warnings: [],
    });
    expect(requests.map((u) => [u.pathname, u.searchParams.get("depth")])).toEqual([
      ["/api/v3/exchanges/binance/tickers", "true"],
    ]);
    expect(requests[0]?.searchParams.get("coin_ids")).toBe("chainlink,uniswap");
    expect(await flagsOn("2025-05-01")).toEqual(["exceeds_public_depth"]);
    const day = await sql`
      select cost_to_move_up_usd, cost_to_move_down_usd, bid_ask_spread_percentage, volume_usd,
        quote_coin_id from public_depth_days where day = '2025-05-01'`.execute(t.database.db);
    expect(day.rows).toEqual([
      {
        cost_to_move_up_usd: 7000,
        cost_to_move_down_usd: 5000,
        bid_ask_spread_percentage: 0.05,
        volume_usd: 2_500_000,
        quote_coin_id: "tether",
      },
    ]);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createCoinGeckoClient } from "../src/adapters/coingecko-client.js";
import { createAdminServices } from "../src/services/admin.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { ok, startCoinGecko, stopCoinGecko } from "./helpers/coingecko.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { submitAll } from "./helpers/reports.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());
afterEach(stopCoinGecko);

const date = "2026-11-21";
const linkTicker = (target: string, cost: number, lastFetchAt: string) => ({
  base: "LINK",
  target,
  coin_id: "chainlink",
  target_coin_id: "tether",
  cost_to_move_up_usd: cost,
  cost_to_move_down_usd: cost,
  last_fetch_at: lastFetchAt,
});

const admin = (baseUrl: string) =>
  createAdminServices(t.database.stores, {
    now: () => new Date(`${date}T11:00:00Z`),
    coinGecko: () => createCoinGeckoClient({ baseUrl, sleep: async () => {} }),
  });

describe("public depth of one quote coin under two symbols", () => {
  it("goes to the market of each ticker's symbol, and flags the reports of that market", async () => {
    await admin("http://127.0.0.1:9/unused").importMarketData({
      markets: [
        {
          exchangeId: "binance",
          baseCoinId: "chainlink",
          quoteCoinId: "tether",
          quoteSymbol: "USDT.E",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    const depth = { bidDepth200: 1000, askDepth200: 1000, bidAskDepth200: 2000 };
    const bySymbol = (quoteSymbol: string) =>
      v2Record({ date, ...depth, quoteCoinId: undefined, quoteCoinSymbol: quoteSymbol });
    await submitAll(t, KEYS.acme, [
      v2Record({ date, ...depth }),
      bySymbol("USDT"),
      bySymbol("USDT.E"),
    ]);
    const { baseUrl } = await startCoinGecko({
      "/exchanges/binance/tickers": ok({
        name: "Binance",
        tickers: [
          linkTicker("USDT", 100, `${date}T10:00:00+00:00`),
          linkTicker("USDT.E", 99_999, `${date}T10:05:00+00:00`),
        ],
      }),
    });
    const summary = await admin(baseUrl).quality.syncDepthSnapshots({ exchangeIds: ["binance"] });
    expect(summary).toMatchObject({ snapshots: 2, daysChanged: 2 });

    const response = await t.request({
      method: "GET",
      url: `/api/v1/reports?include=quality&dateGte=${date}&dateLte=${date}&exchangeId=binance`,
      key: KEYS.acme,
    });
    // 1000 > 100 × 1.1 on USDT's day; USDT.E's 99,999 is its own day's.
    const flags = Object.fromEntries(
      response
        .json()
        .items.map(
          (item: { quoteCoinId?: string; quoteCoinSymbol?: string; qualityFlags: string[] }) => [
            item.quoteCoinId ?? item.quoteCoinSymbol,
            item.qualityFlags.includes("exceeds_public_depth"),
          ],
        ),
    );
    expect(flags).toEqual({
      tether: true,
      USDT: true,
      "USDT.E": false,
    });
  });
});

import { expect } from "vitest";
import { loadFixture } from "../../src/services/fixtures.js";
import type { Stores } from "../../src/store/stores.js";
import type { TestApp } from "./app.js";
import { KEYS, v2Record } from "./fixture.js";

/** binance chainlink/USDT spot (the fixture's market) on `date`, as a fixture snapshot. */
export const depthSnapshot = (date: string, figures: Record<string, unknown>) => ({
  exchangeId: "binance",
  baseCoinId: "chainlink",
  quoteSymbol: "USDT",
  date,
  ...figures,
});

/** Loads public depth snapshots as a fixture does (kept, then the days' flags recomputed). */
export const loadDepthSnapshots = (stores: Stores, snapshots: unknown[]) =>
  loadFixture(stores, { depthSnapshots: snapshots }, new Date());

/** acme's flags of the report of `date`, as GET /api/v1/reports?include=quality lists them. */
export async function qualityFlagsOn(t: TestApp, date: string): Promise<string[]> {
  const response = await t.request({
    method: "GET",
    url: `/api/v1/reports?include=quality&dateGte=${date}&dateLte=${date}&exchangeId=binance`,
    key: KEYS.acme,
  });
  const items = response.json().items;
  expect(items).toHaveLength(1);
  return items[0].qualityFlags;
}

/** A plausible record whose ±2 % depth is `bid` and `ask` (the total kept consistent). */
export const withDepth200 = (date: string, bid: number, ask = 6100) =>
  v2Record({ date, bidDepth200: bid, askDepth200: ask, bidAskDepth200: bid + ask });

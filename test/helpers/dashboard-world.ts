import { expect } from "vitest";
import { startTestApp, type TestApp } from "./app.js";
import { baseFixture, KEYS, v2Record } from "./fixture.js";

/**
 * A hand-built world for the dashboard's market, calendar and coin pages, every figure chosen
 * (see the tests' expectations): acme owes chainlink on binance/tether (A) and kraken/USD (B)
 * from 2025-03-01, with bidDepth200's minimum raised on 2025-03-05; globex owes chainlink on
 * binance/tether; acme also owes uniswap. Reports go through the API at chosen times of the
 * service clock, which ends at 2025-03-09T10:00Z: 2025-03-01..07 are due, 2025-03-08 pending.
 */
export const DASHBOARD_KEYS = {
  ...KEYS,
  chainlinkLabs: "chainlink-labs-dash-key-0123456789abcdef",
  uniswapLabs: "uniswap-labs-dash-key-0123456789abcdef0",
  operator: "operator-dash-key-0123456789abcdef01234",
};

export const WORLD_DAYS = [1, 2, 3, 4, 5, 6, 7, 8].map((d) => `2025-03-0${d}`);
export const WORLD_NOW = new Date("2025-03-09T10:00:00Z");

/** Market A's figures, day by day (2025-03-01..08). */
export const MARKET_A = {
  bidDepth200: [6100, 6200, 6300, 6400, 6500, 5500, 6700, 6800],
  askDepth200: [7010, 7020, 7030, 7040, 7050, 7060, 7070, 7080],
  bidAskSpread: [0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18],
  /** minBidDepth200 of the period holding each day. */
  minBidDepth200: [5000, 5000, 5000, 5000, 6000, 6000, 6000, 6000],
};
/** Market B's bidDepth200 (kraken/USD): 2025-03-04 is missing, 2025-03-06 arrives late. */
export const MARKET_B_BID = [8001, 8002, 8003, null, 8005, 8006, 8007, 8008];

const kpis = (minBidDepth200: number) => ({
  minBidDepth200,
  minAskDepth200: 5000,
  maxBidAskSpread: 0.5,
});
const A = { exchangeId: "binance", quote: "tether", instrumentType: "spot" as const };
const B = { exchangeId: "kraken", quote: "USD", instrumentType: "spot" as const };

function fixture() {
  const f = baseFixture();
  // Market data for binance chainlink/tether from 2025-03-02: A's first day is ineligible.
  const market = f.markets.find((m) => m.exchangeId === "binance" && m.baseCoinId === "chainlink");
  if (market) market.collectedSince = "2025-03-02";
  const [acme, globex] = f.organizations;
  const chainlink = acme?.engagements.find((e) => e.baseCoinId === "chainlink");
  if (chainlink)
    chainlink.obligations = [
      { since: "2025-03-01", until: "2025-03-04", markets: [A, B], kpis: kpis(5000) },
      { since: "2025-03-05", until: null, markets: [A, B], kpis: kpis(6000) },
    ];
  const uniswap = acme?.engagements.find((e) => e.baseCoinId === "uniswap");
  if (uniswap)
    uniswap.obligations = [
      { since: "2025-03-01", until: null, markets: [A], kpis: { minBidDepth200: 1000 } },
    ];
  const globexChainlink = globex?.engagements[0];
  if (globexChainlink)
    globexChainlink.obligations = [
      { since: "2025-03-01", until: null, markets: [A], kpis: kpis(5000) },
    ];
  f.organizations.push(
    {
      id: "chainlink-labs",
      name: "Chainlink Labs",
      kind: "project",
      coins: ["chainlink"],
      apiKeys: [DASHBOARD_KEYS.chainlinkLabs],
      engagements: [],
    },
    {
      id: "uniswap-labs",
      name: "Uniswap Labs",
      kind: "project",
      coins: ["uniswap"],
      apiKeys: [DASHBOARD_KEYS.uniswapLabs],
      engagements: [],
    },
    {
      id: "platform",
      name: "The Platform",
      kind: "operator",
      apiKeys: [DASHBOARD_KEYS.operator],
      engagements: [],
    },
  );
  return f;
}

const usd = { quoteCoinId: null, quoteCoinSymbol: "USD" };

/** The one report of the world with a quality flag: market A's, total depth not bid + ask. */
export const FLAGGED = { date: "2025-03-03", flags: ["total_depth_mismatch"] };

/** A record whose ±2 % total is the sum of its sides (a plausible one: no quality flag). */
const plausible = (fields: Record<string, unknown>) => {
  const record = v2Record(fields);
  return {
    ...record,
    bidAskDepth200: Number(record.bidDepth200) + Number(record.askDepth200),
    ...fields,
  };
};
/** Uniswap's depth at 200 bps is small: the narrower bands below it. */
const SMALL_BANDS = {
  bidDepthTob: 100,
  bidDepth10: 200,
  bidDepth25: 300,
  bidDepth50: 400,
  bidDepth100: 500,
  bidAskDepth50: 4500,
  bidAskDepth100: 5600,
};

function acmeDay(i: number): Record<string, unknown>[] {
  const date = WORLD_DAYS[i];
  const records = [
    plausible({
      date,
      bidDepth200: MARKET_A.bidDepth200[i],
      askDepth200: MARKET_A.askDepth200[i],
      bidAskSpread: MARKET_A.bidAskSpread[i],
      ...(date === FLAGGED.date ? { bidAskDepth200: 1 } : {}),
    }),
    plausible({ date, baseCoinId: "uniswap", bidDepth200: 2000 + i, ...SMALL_BANDS }),
  ];
  const bid = MARKET_B_BID[i];
  // 2025-03-06 on kraken is sent apart, after its deadline.
  if (bid !== null && i !== 5)
    records.push(
      plausible({
        date,
        exchangeId: "kraken",
        ...usd,
        bidDepth200: bid,
        askDepth200: 9000 + i + 1,
        bidAskSpread: 0.3,
      }),
    );
  return records;
}

function globexDay(i: number): Record<string, unknown>[] {
  if (i === 1) return []; // 2025-03-02 missing
  return [
    plausible({
      date: WORLD_DAYS[i],
      bidDepth200: 10000,
      askDepth200: 11000,
      bidAskSpread: i === 2 ? 0.6 : 0.2,
    }),
  ];
}

export type DashboardWorld = { t: TestApp; setClock(at: Date): void };

export async function dashboardWorld(env: Record<string, string> = {}): Promise<DashboardWorld> {
  let clock = new Date("2025-03-02T08:00:00Z");
  const t = await startTestApp({ fixture: fixture(), env, now: () => clock });
  const world = { t, setClock: (at: Date) => (clock = at) };
  const submit = async (at: Date, key: string, data: Record<string, unknown>[]) => {
    if (data.length === 0) return;
    clock = at;
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key,
      payload: { data },
    });
    expect(response.statusCode, response.body).toBe(201);
  };
  for (const [i, date] of WORLD_DAYS.entries()) {
    const morning = new Date(`${date}T00:00:00Z`);
    morning.setUTCDate(morning.getUTCDate() + 1);
    morning.setUTCHours(8);
    await submit(morning, KEYS.acme, acmeDay(i));
    await submit(morning, KEYS.globex, globexDay(i));
  }
  await submit(new Date("2025-03-07T15:00:00Z"), KEYS.acme, [
    plausible({
      date: "2025-03-06",
      exchangeId: "kraken",
      ...usd,
      bidDepth200: 8006,
      askDepth200: 9006,
      bidAskSpread: 0.3,
    }),
  ]);
  clock = WORLD_NOW;
  return world;
}

import { expect } from "vitest";
import { startTestApp, type TestApp } from "./app.js";
import { baseFixture, KEYS, v1Record, v2Record } from "./fixture.js";
import { insertObligation, setOrganizationKind } from "./obligations.js";

/**
 * A hand-built world for the scorecard tests: acme owes seven chainlink markets and one
 * uniswap market over 2025-03-01..05 (one case per market, see DAYS and MARKETS), globex one
 * chainlink market; a project owning chainlink and the operator read them. Reports are sent
 * through the API at chosen times of the service clock, so lateness is real.
 */
export const SCORECARD_KEYS = {
  ...KEYS,
  project: "chainlink-foundation-key-0123456789abcdef",
  operator: "platform-operator-key-0123456789abcdef",
};

export const DAYS = ["2025-03-01", "2025-03-02", "2025-03-03", "2025-03-04", "2025-03-05"];
export const CHAINLINK_KPIS = {
  minBidDepth200: 5000,
  maxBidAskSpread: 0.5,
  minTopOfBookPercentage: 40,
};

const spot = "spot" as const;
export const MARKETS = {
  allMet: { exchangeId: "binance", quote: "tether", instrumentType: spot },
  kpiMissed: { exchangeId: "kraken", quote: "USD", instrumentType: spot },
  v1Report: { exchangeId: "binance", quote: "usd-coin", instrumentType: spot },
  missingDay: { exchangeId: "binance", quote: "EUR", instrumentType: spot },
  late: { exchangeId: "binance", quote: "GBP", instrumentType: spot },
  corrected: { exchangeId: "binance", quote: "JPY", instrumentType: spot },
  routed: { exchangeId: "binance_futures", quote: "tether", instrumentType: "perp" as const },
};

/** The day after `date` at `time` (UTC). */
export const dayAfter = (date: string, time = "08:00:00.000") => {
  const d = new Date(`${date}T${time}Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d;
};

export type World = { t: TestApp; setClock(at: Date): void };

export async function scorecardWorld(env: Record<string, string> = {}): Promise<World> {
  let clock = new Date("2025-03-02T08:00:00Z");
  const fixture = baseFixture();
  fixture.organizations.push(
    {
      id: "chainlink-foundation",
      name: "Chainlink Foundation",
      apiKeys: [SCORECARD_KEYS.project],
      engagements: [],
    },
    { id: "platform", name: "Platform", apiKeys: [SCORECARD_KEYS.operator], engagements: [] },
  );
  const t = await startTestApp({ fixture, env, now: () => clock });
  const db = t.database.db;
  await setOrganizationKind(db, "chainlink-foundation", "project", ["chainlink"]);
  await setOrganizationKind(db, "platform", "operator");
  await insertObligation(db, {
    organizationId: "acme",
    baseCoinId: "chainlink",
    since: "2025-01-01",
    markets: Object.values(MARKETS),
    kpis: CHAINLINK_KPIS,
  });
  const uniswapMarket = { exchangeId: "binance", quote: "tether", instrumentType: spot };
  await insertObligation(db, {
    organizationId: "acme",
    baseCoinId: "uniswap",
    since: "2025-03-01",
    until: "2025-03-03",
    markets: [uniswapMarket],
    kpis: { minBidDepth200: 5000 },
  });
  await insertObligation(db, {
    organizationId: "acme",
    baseCoinId: "uniswap",
    since: "2025-03-04",
    markets: [uniswapMarket],
    kpis: { minBidDepth200: 7000, minAskDepth200: 1000 },
  });
  await insertObligation(db, {
    organizationId: "globex",
    baseCoinId: "chainlink",
    since: "2025-01-01",
    markets: [MARKETS.allMet],
    kpis: CHAINLINK_KPIS,
  });
  const world = { t, setClock: (at: Date) => (clock = at) };
  await submitEverything(world);
  return world;
}

async function submit(
  world: World,
  at: Date,
  version: 1 | 2,
  data: Record<string, unknown>[],
  key = KEYS.acme,
) {
  world.setClock(at);
  const response = await world.t.request({
    method: "POST",
    url: `/api/v${version}/report`,
    key,
    payload: { data },
  });
  expect(response.statusCode, response.body).toBe(201);
}

const fiat = (symbol: string) => ({ quoteCoinId: null, quoteCoinSymbol: symbol });

/** The acme chainlink and uniswap reports of one day, sent the next morning (on time). */
function onTime(date: string, day: number): Record<string, unknown>[] {
  const d = { date };
  const records = [
    v2Record(d),
    v2Record({
      ...d,
      exchangeId: "kraken",
      ...fiat("USD"),
      bidDepth200: [2, 4].includes(day) ? 4000 : 6000,
    }),
    v2Record({ ...d, ...fiat("JPY"), bidDepth200: day === 3 ? 4000 : 6000 }),
    // Sent as perp for binance: stored under binance_futures, its venue family's perp venue.
    v2Record({ ...d, instrumentType: "perp" }),
    v2Record({ ...d, baseCoinId: "uniswap" }),
  ];
  if (day <= 2) records.push(v2Record({ ...d, quoteCoinId: "usd-coin" }));
  if (day !== 3) records.push(v2Record({ ...d, ...fiat("EUR") }));
  if (day === 1 || day === 3 || day === 5) records.push(v2Record({ ...d, ...fiat("GBP") }));
  return records;
}

async function submitEverything(world: World) {
  for (const [i, date] of DAYS.entries()) {
    const day = i + 1;
    await submit(world, dayAfter(date), 2, onTime(date, day));
    await submit(world, dayAfter(date), 2, [v2Record({ date })], KEYS.globex);
    if (day >= 3) {
      const v1 = v1Record({ date, quoteCoinId: "usd-coin", bidDepth200: 6000, bidAskSpread: 0.25 });
      await submit(world, dayAfter(date), 1, [v1]);
    }
  }
  // GBP: day 2 first arrives an hour after its deadline (late); day 4 exactly at it (not late).
  await submit(world, dayAfter("2025-03-02", "13:00:00.000"), 2, [
    v2Record({ date: "2025-03-02", ...fiat("GBP") }),
  ]);
  await submit(world, dayAfter("2025-03-04", "12:00:00.000"), 2, [
    v2Record({ date: "2025-03-04", ...fiat("GBP") }),
  ]);
  // JPY corrections after the deadlines: day 3 now meets its KPIs, day 5 no longer does.
  await submit(world, new Date("2025-03-07T09:00:00Z"), 2, [
    v2Record({ date: "2025-03-03", ...fiat("JPY"), bidDepth200: 6000 }),
    v2Record({ date: "2025-03-05", ...fiat("JPY"), bidDepth200: 4000 }),
  ]);
}

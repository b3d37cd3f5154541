import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../src/services/fixtures.js";
import { SCORECARD_KEYS as KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

let w: World;
beforeAll(async () => {
  w = await scorecardWorld();
  w.setClock(new Date("2025-03-10T00:00:00Z"));
});
afterAll(async () => w?.t.close());

const snapshot = (date: string, figures: object) => ({
  exchangeId: "binance",
  baseCoinId: "chainlink",
  quoteSymbol: "USDT",
  date,
  ...figures,
});

/** The operator's scorecard of binance chainlink/tether spot, by organization. */
const allMet = (organizationId: string) => scorecardOf(organizationId, "binance", "tether");

/** The operator's scorecard of one chainlink spot market of an organization. */
async function scorecardOf(organizationId: string, exchangeId: string, quote: string) {
  const response = await w.t.request({
    method: "GET",
    url: `/api/v1/scorecards?dateGte=2025-03-01&dateLte=2025-03-05&organizationId=${organizationId}&baseCoinId=chainlink`,
    key: KEYS.operator,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response
    .json()
    .items.find(
      (i: { exchangeId: string; quote: string }) =>
        i.exchangeId === exchangeId && i.quote === quote,
    );
}

describe("scorecards: daysFlagged and medianDepthShare200", () => {
  it("has no share without a snapshot", async () => {
    expect(await allMet("acme")).toMatchObject({
      daysFlagged: 0,
      medianDepthShare200: { bid: null, ask: null },
    });
  });

  it("takes, per side, the median of reported ÷ public depth over the days with a snapshot", async () => {
    // Every report of this market has bidDepth200 6000 and askDepth200 6100.
    await loadFixture(
      w.t.database.stores,
      {
        depthSnapshots: [
          snapshot("2025-03-01", { costToMoveDownUsd: 12000, costToMoveUpUsd: 6100 }),
          snapshot("2025-03-02", { costToMoveDownUsd: 6000, costToMoveUpUsd: 0 }),
          snapshot("2025-03-03", { costToMoveDownUsd: 24000, costToMoveUpUsd: 12200 }),
          // Flagged: on 03-02, ask 6100 against a public 0; on 03-04, bid 6000 above 1.1 × 5000.
          snapshot("2025-03-04", { costToMoveDownUsd: 5000 }),
        ],
      },
      new Date(),
    );
    // bid: 0.5, 1, 0.25, 1.2 -> 0.75; ask: 1, 0.5 (a public depth of 0 or none gives no share).
    for (const organizationId of ["acme", "globex"]) {
      expect(await allMet(organizationId)).toMatchObject({
        daysFlagged: 2,
        medianDepthShare200: { bid: 0.75, ask: 0.75 },
      });
    }
  });
});

describe("medianDepthShare200: which public depth a report is compared with", () => {
  /** A chainlink spot public depth, written as the market data sync keeps it. */
  const publicDepth = (
    exchangeId: string,
    [quoteSymbol, quoteCoinId]: [string, string | null],
    day: string,
    [down, up]: [number, number],
  ) => sql`insert into public_depth_days (exchange_id, base_coin_id, instrument_type,
      quote_symbol, day, quote_coin_id, taken_at, cost_to_move_up_usd, cost_to_move_down_usd)
    values (${exchangeId}, 'chainlink', 'spot', ${quoteSymbol}, ${day}, ${quoteCoinId},
      ${`${day}T12:00:00Z`}, ${up}, ${down})`;

  it("takes a report without a quote coin by quote symbol, one with a quote coin by its first symbol", async () => {
    const db = w.t.database.db;
    // kraken chainlink/USD (quote symbol only): bid 6000 and 4000, ask 6100 on days 1 and 2.
    await publicDepth("kraken", ["USD", null], "2025-03-01", [12000, 6100]).execute(db);
    await publicDepth("kraken", ["USD", null], "2025-03-02", [4000, 3050]).execute(db);
    // A coin whose id is the report's quote symbol: not the report's market.
    await publicDepth("kraken", ["ZUSD", "USD"], "2025-03-03", [1, 1]).execute(db);
    // binance chainlink/usd-coin: two symbols of that coin on day 1, the first one counts.
    await publicDepth("binance", ["USDC", "usd-coin"], "2025-03-01", [12000, 6100]).execute(db);
    await publicDepth("binance", ["AUSDC", "usd-coin"], "2025-03-01", [3000, 3050]).execute(db);
    await publicDepth("binance", ["USDC", "usd-coin"], "2025-03-02", [6000, 12200]).execute(db);
    // bid: 0.5, 1 -> 0.75; ask: 1, 2 -> 1.5.
    expect((await scorecardOf("acme", "kraken", "USD")).medianDepthShare200).toEqual({
      bid: 0.75,
      ask: 1.5,
    });
    // bid: 2 (AUSDC), 1 -> 1.5; ask: 2, 0.5 -> 1.25.
    expect((await scorecardOf("acme", "binance", "usd-coin")).medianDepthShare200).toEqual({
      bid: 1.5,
      ask: 1.25,
    });
  });
});

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
async function allMet(organizationId: string) {
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
        i.exchangeId === "binance" && i.quote === "tether",
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

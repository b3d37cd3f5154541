import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp } from "./helpers/app.js";
import {
  depthSnapshot,
  loadDepthSnapshots,
  qualityFlagsOn,
  withDepth200,
} from "./helpers/public-depth.js";
import { SCORECARD_KEYS as KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";
import { submitOk } from "./helpers/submission.js";

// Reported depths are any finite number from 0 (1e308 is accepted), public depths too: the
// quotient of two of them, or a public depth times the tolerance, can leave float8's range,
// which PostgreSQL refuses with an error ("value out of range: overflow" or "underflow"):
// the scorecard answered 500, and so did every submission of a market-day with such a depth.
let w: World;
beforeAll(async () => {
  w = await scorecardWorld();
  w.setClock(new Date("2025-03-10T00:00:00Z"));
});
afterAll(async () => w?.t.close());

const scorecard = () =>
  w.t.request({
    method: "GET",
    url: "/api/v1/scorecards?dateGte=2025-03-01&dateLte=2025-03-05&organizationId=acme&baseCoinId=chainlink",
    key: KEYS.operator,
  });

describe("medianDepthShare200 of depths far apart", () => {
  it("answers, with no share for a quotient float8 cannot hold", async () => {
    await loadFixture(
      w.t.database.stores,
      {
        depthSnapshots: ["2025-03-01", "2025-03-02"].map((date) => ({
          exchangeId: "binance",
          baseCoinId: "chainlink",
          quoteSymbol: "USDT",
          date,
          costToMoveDownUsd: 0.5,
          costToMoveUpUsd: 1e300,
        })),
      },
      new Date(),
    );
    // bid: 1e308 / 0.5 overflows; ask: 1e-300 / 1e300 underflows, 0 / 1e300 is 0.
    await sql`update reports set bid_depth_200 = 1e308,
        ask_depth_200 = case when date = '2025-03-01' then 0 else 1e-300 end
      where organization_id = 'acme' and date in ('2025-03-01', '2025-03-02')`.execute(
      w.t.database.db,
    );
    const response = await scorecard();
    expect(response.statusCode, response.body).toBe(200);
    const market = response
      .json()
      .items.find(
        (i: { exchangeId: string; quote: string }) =>
          i.exchangeId === "binance" && i.quote === "tether",
      );
    expect(market.medianDepthShare200).toEqual({ bid: null, ask: 0 });
  });
});

describe("exceeds_public_depth against a public depth near float8's limit", () => {
  it("stores the report (1.7e308 × 1.1 is out of range)", async () => {
    const app = await startTestApp({ now: () => new Date("2025-06-15T12:00:00Z") });
    try {
      await loadDepthSnapshots(app.database.stores, [
        depthSnapshot("2025-06-01", { costToMoveDownUsd: 1.7e308, costToMoveUpUsd: 1 }),
      ]);
      await submitOk(app, 2, [withDepth200("2025-06-01", 6000)]);
      expect(await qualityFlagsOn(app, "2025-06-01")).toEqual(["exceeds_public_depth"]);
    } finally {
      await app.close();
    }
  });
});

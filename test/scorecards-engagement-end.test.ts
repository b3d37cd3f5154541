import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCORECARD_KEYS as KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

// Found in review: an obligation that outlived its engagement showed a project the market
// maker's days after the engagement ended, and a far date answered 500.
let w: World;
beforeAll(async () => {
  w = await scorecardWorld();
  w.setClock(new Date("2025-03-10T00:00:00Z"));
});
afterAll(async () => w?.t.close());

const daily = (query: string, key: string) =>
  w.t.request({ method: "GET", url: `/api/v1/scorecards/daily?${query}`, key });

describe("scorecards after an engagement ends", () => {
  it("count no day after the engagement's end, even for a period left open", async () => {
    const query = "dateGte=2025-03-01&dateLte=2025-03-05&organizationId=acme&baseCoinId=chainlink";
    const before = (await daily(query, KEYS.project)).json().items as { date: string }[];
    expect(before.some((i) => i.date > "2025-03-02")).toBe(true);
    // Shortened in place (as a fixture reload may): the obligation period stays open-ended.
    await w.t.database.db
      .updateTable("engagements")
      .set({ until: "2025-03-02" })
      .where("organization_id", "=", "acme")
      .where("base_coin_id", "=", "chainlink")
      .execute();
    for (const key of [KEYS.project, KEYS.operator, KEYS.acme]) {
      const items = (await daily(query, key)).json().items as { date: string }[];
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((i) => i.date <= "2025-03-02")).toBe(true);
      const cards = await w.t.request({
        method: "GET",
        url: `/api/v1/scorecards?${query}`,
        key,
      });
      for (const item of cards.json().items) expect(item.daysDue).toBeLessThanOrEqual(2);
    }
  });

  it("answers a 400, not a 500, for a date whose deadline would leave the calendar", async () => {
    for (const path of ["/api/v1/scorecards", "/api/v1/scorecards/daily"]) {
      const r = await w.t.request({
        method: "GET",
        url: `${path}?dateGte=9999-12-31&dateLte=9999-12-31`,
        key: KEYS.operator,
      });
      expect(r.statusCode).toBe(400);
      expect(r.json().message[0]).toEqual({
        path: "dateGte",
        message: "Date must not be after 9998-12-31",
      });
    }
  });
});

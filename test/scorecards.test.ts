import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DAYS,
  dayAfter,
  SCORECARD_KEYS as KEYS,
  MARKETS,
  scorecardWorld,
  type World,
} from "./helpers/scorecard-world.js";

/**
 * Scorecards on a hand-built world (helpers/scorecard-world.ts): one case per obligation
 * market, each answer written out here.
 */
let w: World;
beforeAll(async () => {
  w = await scorecardWorld();
});
afterAll(async () => w?.t.close());

const RANGE = "dateGte=2025-03-01&dateLte=2025-03-05";

async function get(url: string, key = KEYS.operator) {
  const response = await w.t.request({ method: "GET", url, key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

const acme = { organizationId: "acme", organizationName: "Acme Market Making" };
const chainlink = { ...acme, baseCoinId: "chainlink" };
const each = (met: number, missed = 0) => ({ daysMet: met, daysMissed: missed });
const kpis = (bid: [number, number], spread: [number, number], top: [number, number]) => ({
  minBidDepth200: each(...bid),
  maxBidAskSpread: each(...spread),
  minTopOfBookPercentage: each(...top),
});
const card = (
  market: object,
  c: { reported?: number; late?: number; eligible?: number; met: number; flagged?: number },
  k: object,
) => ({
  ...market,
  daysDue: 5,
  daysReported: c.reported ?? 5,
  daysMissing: 5 - (c.reported ?? 5),
  daysLate: c.late ?? 0,
  daysEligible: c.eligible ?? 0,
  daysMet: c.met,
  compliance: c.met / 5,
  kpis: k,
  daysFlagged: c.flagged ?? 0,
  medianDepthShare200: { bid: null, ask: null },
});

const EXPECTED = {
  missingDay: card(
    { ...chainlink, ...MARKETS.missingDay },
    { reported: 4, met: 4 },
    kpis([4, 0], [4, 0], [4, 0]),
  ),
  late: card({ ...chainlink, ...MARKETS.late }, { late: 1, met: 5 }, kpis([5, 0], [5, 0], [5, 0])),
  corrected: card(
    { ...chainlink, ...MARKETS.corrected },
    // Its KPI misses are depth bands that shrink as they widen: flagged too.
    { met: 4, flagged: 1 },
    kpis([4, 1], [5, 0], [5, 0]),
  ),
  allMet: card(
    { ...chainlink, ...MARKETS.allMet },
    { eligible: 5, met: 5 },
    kpis([5, 0], [5, 0], [5, 0]),
  ),
  v1Report: card(
    { ...chainlink, ...MARKETS.v1Report },
    // What v1 omits is stored as the spec's 0 but is no present value: nothing to flag.
    { met: 2 },
    kpis([5, 0], [5, 0], [2, 3]),
  ),
  routed: card(
    { ...chainlink, ...MARKETS.routed },
    { eligible: 5, met: 5 },
    kpis([5, 0], [5, 0], [5, 0]),
  ),
  kpiMissed: card(
    { ...chainlink, ...MARKETS.kpiMissed },
    { eligible: 5, met: 3, flagged: 2 },
    kpis([3, 2], [5, 0], [5, 0]),
  ),
  periodChange: card(
    { ...acme, baseCoinId: "uniswap", ...MARKETS.allMet },
    { eligible: 5, met: 3 },
    { minBidDepth200: each(3, 2), minAskDepth200: each(2, 0) },
  ),
  globex: card(
    {
      organizationId: "globex",
      organizationName: "Globex Liquidity",
      baseCoinId: "chainlink",
      ...MARKETS.allMet,
    },
    { eligible: 5, met: 5 },
    kpis([5, 0], [5, 0], [5, 0]),
  ),
};

describe("GET /api/v1/scorecards, every day due", () => {
  beforeAll(() => w.setClock(new Date("2025-03-10T00:00:00Z")));

  it("scores each obligation market exactly, in order (organization, coin, exchange, quote, type)", async () => {
    const body = await get(`/api/v1/scorecards?${RANGE}`);
    expect(body).toEqual({
      dateGte: "2025-03-01",
      dateLte: "2025-03-05",
      items: [
        EXPECTED.missingDay,
        EXPECTED.late,
        EXPECTED.corrected,
        EXPECTED.allMet,
        EXPECTED.v1Report,
        EXPECTED.routed,
        EXPECTED.kpiMissed,
        EXPECTED.periodChange,
        EXPECTED.globex,
      ],
    });
  });

  it("filters by organization and coin", async () => {
    const body = await get(`/api/v1/scorecards?${RANGE}&organizationId=acme&baseCoinId=uniswap`);
    expect(body.items).toEqual([EXPECTED.periodChange]);
  });

  it("lists each day of a market with its status, lateness, failed KPIs and eligibility", async () => {
    const items = (await get(`/api/v1/scorecards/daily?${RANGE}&baseCoinId=chainlink`)).items;
    const of = (market: { exchangeId: string; quote: string }, date: string) =>
      items.find(
        (i: Record<string, string>) =>
          i.organizationId === "acme" &&
          i.exchangeId === market.exchangeId &&
          i.quote === market.quote &&
          i.date === date,
      );
    expect(items).toHaveLength(8 * 5);
    expect(of(MARKETS.missingDay, "2025-03-03")).toEqual({
      date: "2025-03-03",
      ...chainlink,
      ...MARKETS.missingDay,
      status: "missing",
      late: false,
      failedKpis: [],
      eligibilityStatus: null,
    });
    expect(of(MARKETS.late, "2025-03-02")).toMatchObject({ status: "met", late: true });
    expect(of(MARKETS.late, "2025-03-04")).toMatchObject({ status: "met", late: false });
    expect(of(MARKETS.corrected, "2025-03-03")).toMatchObject({ status: "met", late: false });
    expect(of(MARKETS.corrected, "2025-03-05")).toMatchObject({
      status: "missed",
      late: false,
      failedKpis: ["minBidDepth200"],
    });
    expect(of(MARKETS.v1Report, "2025-03-04")).toMatchObject({
      status: "missed",
      failedKpis: ["minTopOfBookPercentage"],
      eligibilityStatus: "ineligible_market_data_missing",
    });
    expect(of(MARKETS.routed, "2025-03-01")).toMatchObject({
      exchangeId: "binance_futures",
      instrumentType: "perp",
      status: "met",
      eligibilityStatus: "eligible",
    });
    expect(of(MARKETS.kpiMissed, "2025-03-02")).toMatchObject({
      status: "missed",
      failedKpis: ["minBidDepth200"],
    });
    // Ordered by market, then date.
    expect(items.slice(0, 5).map((i: { date: string }) => i.date)).toEqual(DAYS);
  });

  it("judges each day of a market by its own period's KPIs", async () => {
    const items = (await get(`/api/v1/scorecards/daily?${RANGE}&baseCoinId=uniswap`)).items;
    expect(items.map((i: { status: string }) => i.status)).toEqual([
      "met",
      "met",
      "met",
      "missed",
      "missed",
    ]);
    expect(items[3].failedKpis).toEqual(["minBidDepth200"]);
  });
});

describe("the deadline", () => {
  const allMet = async () =>
    (await get(`/api/v1/scorecards?${RANGE}&organizationId=acme&baseCoinId=chainlink`)).items[3];
  const lastDay = async () =>
    (
      await get(
        `/api/v1/scorecards/daily?dateGte=2025-03-05&dateLte=2025-03-05&organizationId=acme`,
      )
    ).items[3];

  it("keeps a day pending, counted nowhere, until its deadline has passed", async () => {
    w.setClock(dayAfter("2025-03-05", "11:00:00.000"));
    expect(await allMet()).toMatchObject({
      daysDue: 4,
      daysReported: 4,
      daysMet: 4,
      compliance: 1,
    });
    expect(await lastDay()).toEqual({
      date: "2025-03-05",
      ...chainlink,
      ...MARKETS.allMet,
      status: "pending",
      late: false,
      failedKpis: [],
      eligibilityStatus: "eligible",
    });
    w.setClock(dayAfter("2025-03-05", "12:00:00.000"));
    expect(await allMet()).toMatchObject({ daysDue: 4 });
  });

  it("counts the day once the deadline has passed", async () => {
    w.setClock(dayAfter("2025-03-05", "12:00:00.001"));
    expect(await allMet()).toMatchObject({ daysDue: 5, daysMet: 5 });
    expect((await lastDay()).status).toBe("met");
  });

  it("answers an obligation whose every day is pending with nothing due", async () => {
    w.setClock(dayAfter("2025-03-05", "11:00:00.000"));
    const body = await get(
      "/api/v1/scorecards?dateGte=2025-03-05&dateLte=2025-03-05&organizationId=acme&baseCoinId=uniswap",
    );
    expect(body.items).toEqual([
      {
        ...EXPECTED.periodChange,
        daysDue: 0,
        daysReported: 0,
        daysMissing: 0,
        daysEligible: 0,
        daysMet: 0,
        compliance: null,
        kpis: {},
      },
    ]);
  });
});

describe("the default range", () => {
  it("is the 30 days ending yesterday (UTC)", async () => {
    w.setClock(new Date("2025-03-10T10:00:00Z"));
    const body = await get("/api/v1/scorecards?organizationId=acme&baseCoinId=chainlink");
    expect(body.dateGte).toBe("2025-02-08");
    expect(body.dateLte).toBe("2025-03-09");
    // 2025-03-09 is still pending (due 2025-03-10 12:00): 29 days due, 5 reported.
    expect(body.items[3]).toMatchObject({ daysDue: 29, daysReported: 5, daysMissing: 24 });
  });

  it("ends yesterday when only dateGte is given", async () => {
    w.setClock(new Date("2025-03-10T10:00:00Z"));
    const body = await get("/api/v1/scorecards?dateGte=2025-03-01&organizationId=acme");
    expect([body.dateGte, body.dateLte]).toEqual(["2025-03-01", "2025-03-09"]);
  });
});

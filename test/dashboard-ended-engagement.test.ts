import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { injectSignIn } from "./helpers/dashboard.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";

/**
 * acme's engagement for Aave ran to 2025-03-10 with an obligation on binance/tether/spot; it
 * reported 2025-03-01..03 on time. Today (2025-03-20) the engagement has ended: its listing
 * no longer shows the coin (CONTRACT 2), but its scorecards still judge those days, and its
 * market page, read through the listing, said it had no report.
 */
let t: TestApp;
let clock = new Date("2025-03-02T08:00:00Z");
beforeAll(async () => {
  const f = baseFixture();
  const acme = f.organizations.find((o) => o.id === "acme");
  const aave = acme?.engagements.find((e) => e.baseCoinId === "aave");
  if (!aave) throw new Error("fixture changed");
  aave.since = "2025-01-01";
  aave.until = "2025-03-10";
  aave.obligations = [
    {
      since: "2025-03-01",
      until: "2025-03-10",
      markets: [{ exchangeId: "binance", quote: "tether", instrumentType: "spot" }],
      kpis: { minBidDepth200: 1000 },
    },
  ];
  f.markets.push({
    exchangeId: "binance",
    baseCoinId: "aave",
    quoteCoinId: "tether",
    quoteSymbol: "USDT",
    instrumentType: "spot",
    collectedSince: "2024-01-01",
  });
  f.organizations.push({
    id: "aave-labs",
    name: "Aave Labs",
    kind: "project",
    coins: ["aave"],
    apiKeys: [PROJECT_KEY],
    engagements: [],
  });
  t = await startTestApp({ fixture: f, now: () => clock });
  for (const date of ["2025-03-01", "2025-03-02", "2025-03-03"]) {
    clock = new Date(`${date}T00:00:00Z`);
    clock.setUTCDate(clock.getUTCDate() + 1);
    clock.setUTCHours(8);
    const r = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record({ date, baseCoinId: "aave" })] },
    });
    expect(r.statusCode, r.body).toBe(201);
  }
  clock = new Date("2025-03-20T10:00:00Z");
}, 120_000);
afterAll(async () => t?.close());

const PROJECT_KEY = "aave-labs-key-0123456789abcdef01234";
const lede = (body: string) =>
  /<p class="lede">([\s\S]*?)<\/p>/.exec(body)?.[1]?.replace(/<[^>]+>/g, "") ?? "";

it("shows a market maker's market page of an ended engagement with the reports its scorecards count", async () => {
  const range = "dateGte=2025-03-01&dateLte=2025-03-10";
  const api = await t.request({
    url: `/api/v1/scorecards?baseCoinId=aave&${range}`,
    key: KEYS.acme,
  });
  const card = JSON.parse(api.body).items[0];
  expect(card.daysReported).toBe(3); // the API: three reported days, all met
  expect(card.daysMet).toBe(3);

  const s = await injectSignIn(t, KEYS.acme);
  const calendar = await s.get(`/app/coins/aave/acme/calendar?${range}`);
  expect(calendar.body).toContain('title="2025-03-01: met"');
  const maker = await s.get(`/app/coins/aave/acme?${range}`);
  // 3 days met, median bid/ask depth of the three reports (6000 / 6100), days eligible 3
  expect(maker.body).toContain('<td class="num">6,000</td><td class="num">6,100</td>');

  // The project reading the same market sees its three reports.
  const project = await injectSignIn(t, PROJECT_KEY);
  const theirs = await project.get(`/app/coins/aave/acme/markets/binance/tether/spot?${range}`);
  expect(lede(theirs.body)).toContain("3 days reported");

  const market = await s.get(`/app/coins/aave/acme/markets/binance/tether/spot?${range}`);
  expect(market.statusCode).toBe(200);
  expect(lede(market.body)).toContain("3 days reported");
  expect(market.body).not.toContain("No report in this range.");
});

it("counts the days of the market page in words, and draws no chart for a range with none", async () => {
  const s = await injectSignIn(t, KEYS.acme);
  const market = "/app/coins/aave/acme/markets/binance/tether/spot";
  const one = await s.get(`${market}?dateGte=2025-03-03&dateLte=2025-03-03`);
  expect(lede(one.body)).toContain(": 1 day reported (");
  expect(one.body).toContain("Depth at 200 bps: the figures (1 day)</summary>");
  // Before its obligation and without a report: no day to draw, no empty chart boxes.
  const none = await s.get(`${market}?dateGte=2025-02-01&dateLte=2025-02-10`);
  expect(lede(none.body)).toContain(": 0 days reported (");
  expect(none.body).toContain("No report in this range. No obligation names the market");
  expect(none.body).not.toContain('<figure class="chart"');
  expect(none.body).not.toContain("(0 days)");
});

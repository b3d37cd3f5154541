import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeInBrowser, launchBrowser, listen, PHONE, Visit } from "./helpers/browser.js";
import { injectSignIn } from "./helpers/dashboard.js";
import { DASHBOARD_KEYS, type DashboardWorld, dashboardWorld } from "./helpers/dashboard-world.js";

const MARKET_A = "/app/coins/chainlink/acme/markets/binance/tether/spot";
const CALENDAR = "/app/coins/chainlink/acme/calendar";
const RANGE = "?dateGte=2025-03-01&dateLte=2025-03-08";

/** Market A's depth at 200 bps, as its chart's table shows it (bid, ask, min bid, min ask). */
const DEPTH_200_ROWS = [
  "2025-03-01 | 6,100 | 7,010 | 5,000 | 5,000",
  "2025-03-02 | 6,200 | 7,020 | 5,000 | 5,000",
  "2025-03-03 | 6,300 | 7,030 | 5,000 | 5,000",
  "2025-03-04 | 6,400 | 7,040 | 5,000 | 5,000",
  "2025-03-05 | 6,500 | 7,050 | 6,000 | 5,000",
  "2025-03-06 | 5,500 | 7,060 | 6,000 | 5,000",
  "2025-03-07 | 6,700 | 7,070 | 6,000 | 5,000",
  "2025-03-08 | 6,800 | 7,080 | 6,000 | 5,000",
];

/**
 * Resolves once dashboard-charts.js has drawn every chart. A selector, not a predicate: a
 * string predicate is evaluated in the page, which the page's CSP (no eval) refuses.
 */
const chartsDrawn = (visit: Visit) =>
  visit.page.locator("html[data-charts-drawn='true']").waitFor({ state: "attached" });

/** Clicks the link named `name` and waits until its page (at `path`) has loaded. */
async function follow(visit: Visit, name: string, path: string) {
  await Promise.all([
    visit.page.waitForURL((url) => url.pathname === path),
    visit.page.getByRole("link", { name, exact: true }).click(),
  ]);
}

let world: DashboardWorld;
let base: string;
let browser: Browser;

beforeAll(async () => {
  world = await dashboardWorld();
}, 120_000);
afterAll(async () => world?.t.close());

describeInBrowser("the dashboard's coin, market maker, calendar and market pages", () => {
  beforeAll(async () => {
    base = await listen(world.t);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => browser?.close());

  it("shows a project its coin's market makers side by side, then one's markets", async () => {
    const visit = await Visit.open(browser, base);
    await visit.signIn(DASHBOARD_KEYS.chainlinkLabs);
    expect(await visit.goto("/app/coins")).toBe(200);
    expect(await visit.tableRows("Coins")).toEqual(["Chainlink | LINK | chainlink"]);
    await visit.check("project-coins");
    await follow(visit, "Chainlink", "/app/coins/chainlink");
    expect(await visit.tableRows("Market makers")).toEqual([
      "Acme Market Making | 2 | 85.71 % | 14 | 12 | 1 | 1 | 1 | 6,700 | 7,070 | 0.17",
      "Globex Liquidity | 1 | 71.43 % | 7 | 5 | 1 | 0 | 0 | 10,000 | 11,000 | 0.2",
    ]);
    await visit.check("project-coin-market-makers");
    // A narrower range changes the figures: 2025-03-05..07 are due (03-08 is pending).
    await visit.page.getByLabel("From").fill("2025-03-05");
    await visit.page.getByLabel("To").fill("2025-03-08");
    await Promise.all([
      visit.page.waitForURL(/dateGte=2025-03-05/),
      visit.page.getByRole("button", { name: "Show" }).click(),
    ]);
    expect(await visit.tableRows("Market makers, 2025-03-05 to 2025-03-08")).toEqual([
      "Acme Market Making | 2 | 83.33 % | 6 | 5 | 0 | 1 | 0 | 7,352.5 | 8,037.5 | 0.235",
      "Globex Liquidity | 1 | 100 % | 3 | 3 | 0 | 0 | 0 | 10,000 | 11,000 | 0.2",
    ]);
    await follow(visit, "Acme Market Making", "/app/coins/chainlink/acme");
    expect(await visit.tableRows("Markets,")).toEqual([
      "binance · tether · spot | 85.71 % | 7 | 6 | 0 | 0 | 1 | 6,300 | 7,040 | 0.14 | 6",
      "kraken · USD · spot | 85.71 % | 7 | 6 | 1 | 1 | 0 | 8,004 | 9,004 | 0.3 | 6",
    ]);
    await visit.check("project-market-maker-markets");
    await visit.close();
  });

  it.each([
    ["market maker", DASHBOARD_KEYS.acme],
    ["project", DASHBOARD_KEYS.chainlinkLabs],
    ["operator", DASHBOARD_KEYS.operator],
  ])("shows the %s a market's charts with the figures of its reports", async (kind, key) => {
    const visit = await Visit.open(browser, base);
    await visit.signIn(key);
    expect(await visit.goto(MARKET_A)).toBe(200);
    await chartsDrawn(visit);
    // Nine charts (six depth bands, the spread, time at top of book, fill volume), each drawn
    // with one point per reported day.
    const drawn = await visit.page
      .locator("figure.chart")
      .evaluateAll((figures) => figures.map((f) => f.getAttribute("data-drawn-points")));
    expect(drawn).toEqual(Array(9).fill("8"));
    expect(await visit.tableRows("Depth at 200 bps, by day")).toEqual(DEPTH_200_ROWS);
    expect((await visit.tableRows("Bid-ask spread, by day"))[5]).toBe("2025-03-06 | 0.16 | 0.5");
    // The day whose report carries a quality flag, in words.
    expect(await visit.tableRows("Flagged days (1)")).toEqual(["2025-03-03 | Total ≠ bid + ask"]);
    await visit.check(kind === "market maker" ? "market" : undefined);
    await visit.close();
  });

  it("draws one day around that day, its axis in short figures, its legend at the keyboard", async () => {
    const visit = await Visit.open(browser, base);
    await visit.signIn(DASHBOARD_KEYS.acme);
    expect(await visit.goto(`${MARKET_A}?dateGte=2025-03-05&dateLte=2025-03-05`)).toBe(200);
    await chartsDrawn(visit);
    const depth = visit.page.locator("figure.chart").first();
    expect(await depth.getAttribute("data-drawn-points")).toBe("1");
    const [min, max] = String(await depth.getAttribute("data-x-range"))
      .split(",")
      .map(Number);
    const day = Date.parse("2025-03-05T00:00:00Z") / 1000;
    expect([min, max]).toEqual([day - 43_200, day + 43_200]);
    // The figures are read from the table, grouped by thousands: the ask (7,050) is drawn.
    const depth200 = visit.page.locator("figure#depth-200");
    const [, yMax] = String(await depth200.getAttribute("data-y-range"))
      .split(",")
      .map(Number);
    expect(yMax).toBeGreaterThanOrEqual(7050);
    // Every y label is a short figure (6.1K), never a cut-off "100,000".
    const labels = String(await depth.getAttribute("data-y-labels")).split(" ");
    expect(labels.length).toBeGreaterThan(1);
    for (const label of labels) expect(label).toMatch(/^-?\d+(\.\d+)?[KMBT]?$/);
    // The legend's first line is a button: the keyboard hides it and shows it again.
    const entry = depth.locator(".u-legend .u-series > th").first();
    await expect(entry.getAttribute("aria-pressed")).resolves.toBe("true");
    await entry.focus();
    await visit.page.keyboard.press("Enter");
    await expect(entry.getAttribute("aria-pressed")).resolves.toBe("false");
    await visit.page.keyboard.press(" ");
    await expect(entry.getAttribute("aria-pressed")).resolves.toBe("true");
    await visit.close();
  });

  it("draws the range's owed days, missing ones at the end as gaps, and a range without reports with its axes and thresholds", async () => {
    // globex owes market A from 2025-03-01, reported that day and missed 2025-03-02.
    const globexA = "/app/coins/chainlink/globex/markets/binance/tether/spot";
    const visit = await Visit.open(browser, base);
    await visit.signIn(DASHBOARD_KEYS.globex);
    const depth = visit.page.locator("figure#depth-200");
    const day = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
    expect(await visit.goto(`${globexA}?dateGte=2025-03-01&dateLte=2025-03-02`)).toBe(200);
    await chartsDrawn(visit);
    expect(await depth.getAttribute("data-drawn-points")).toBe("2");
    expect(await depth.getAttribute("data-x-range")).toBe(
      `${day("2025-03-01")},${day("2025-03-02")}`,
    );
    expect(await visit.tableRows("Depth at 200 bps, by day")).toEqual([
      "2025-03-01 | 10,000 | 11,000 | 5,000 | 5,000",
      "2025-03-02 | – | – | 5,000 | 5,000",
    ]);
    expect(await visit.goto(`${globexA}?dateGte=2025-03-02&dateLte=2025-03-02`)).toBe(200);
    await chartsDrawn(visit);
    expect(await depth.getAttribute("data-drawn-points")).toBe("1");
    // The threshold gives the y axis its figures.
    expect(String(await depth.getAttribute("data-y-labels"))).toMatch(/\dK/);
    await visit.check(); // a chart without a figure (top of book) is no error either
    await visit.close();
  });

  it.each([
    ["market maker", DASHBOARD_KEYS.acme],
    ["project", DASHBOARD_KEYS.chainlinkLabs],
    ["operator", DASHBOARD_KEYS.operator],
  ])("shows the %s the calendar with a known missing and a known late day", async (kind, key) => {
    const visit = await Visit.open(browser, base);
    await visit.signIn(key);
    expect(await visit.goto(`${CALENDAR}${RANGE}`)).toBe(200);
    const kraken = visit.page.locator("#market-2");
    await expect(kraken.locator("h2").textContent()).resolves.toBe("kraken · USD · spot");
    const cell = (date: string) => kraken.locator(`td[data-date="${date}"]`);
    await expect(cell("2025-03-04").getAttribute("class")).resolves.toBe("cal-missing");
    await expect(cell("2025-03-04").getAttribute("title")).resolves.toBe("2025-03-04: missing");
    await expect(cell("2025-03-06").getAttribute("class")).resolves.toBe("cal-met cal-late");
    await expect(cell("2025-03-06").getAttribute("title")).resolves.toBe("2025-03-06: met, late");
    await expect(cell("2025-03-06").textContent()).resolves.toBe("6L met, late");
    expect(await visit.tableRows("Days by mark, binance · tether · spot")).toEqual([
      "6 | 1 | 0 | 0 | 1 | 1",
    ]);
    expect(await visit.tableRows("Days by mark, kraken · USD · spot")).toEqual([
      "6 | 0 | 1 | 1 | 0 | 1",
    ]);
    await visit.check(kind === "project" ? "calendar" : undefined);
    await visit.close();
  });

  it("keeps a month of one week as short as its neighbour of two", async () => {
    const visit = await Visit.open(browser, base);
    await visit.signIn(DASHBOARD_KEYS.acme);
    // February 2025 shows one week (24-28), March two.
    expect(await visit.goto(`${CALENDAR}?dateGte=2025-02-27&dateLte=2025-03-08`)).toBe(200);
    const cellHeights = await visit.page
      .locator("#market-1 table.calendar")
      .evaluateAll((tables) =>
        tables.map((t) =>
          Math.round(t.querySelector("tbody td")?.getBoundingClientRect().height ?? 0),
        ),
      );
    expect(cellHeights).toHaveLength(2);
    expect(cellHeights[0]).toBe(cellHeights[1]);
    await visit.close();
  });

  it("leads a market maker from its markets to its own pages, and works at phone width", async () => {
    const visit = await Visit.open(browser, base, PHONE);
    await visit.signIn(DASHBOARD_KEYS.acme);
    expect(await visit.goto("/app/markets")).toBe(200);
    await follow(visit, "Chainlink (LINK)", "/app/coins/chainlink/acme");
    expect(await visit.tableRows("Markets,")).toHaveLength(2);
    await follow(visit, "binance · tether · spot", MARKET_A);
    await chartsDrawn(visit);
    const overflow = await visit.page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBe(0);
    await visit.check("market-phone");
    expect(await visit.goto(`${CALENDAR}${RANGE}`)).toBe(200);
    await visit.check("calendar-phone");
    await visit.close();
  });
});

it("answers 404 for a page outside the caller's scope, whatever its URL", async () => {
  const { t } = world;
  const project = await injectSignIn(t, DASHBOARD_KEYS.chainlinkLabs);
  for (const url of [
    "/app/coins/uniswap",
    "/app/coins/uniswap/acme",
    "/app/coins/uniswap/acme/calendar",
    "/app/coins/uniswap/acme/markets/binance/tether/spot",
    // In scope but no market maker of the coin: not even the organization's name shows.
    "/app/coins/chainlink/uniswap-labs/markets/binance/tether/spot",
    "/app/coins/chainlink/nobody/calendar",
  ]) {
    expect((await project.get(url)).statusCode, url).toBe(404);
  }
  const globex = await injectSignIn(t, DASHBOARD_KEYS.globex);
  expect((await globex.get(MARKET_A)).statusCode).toBe(404);
  expect((await globex.get(CALENDAR)).statusCode).toBe(404);
  expect((await globex.get("/app/coins/chainlink/globex")).statusCode).toBe(200);
  // Coin pages compare market makers: not for a market maker's key.
  expect((await globex.get("/app/coins/chainlink")).statusCode).toBe(403);
  expect((await project.get(`${MARKET_A}x`)).statusCode).toBe(404);
  expect((await project.get(`${CALENDAR}?dateGte=2025-02-30`)).statusCode).toBe(400);
});

import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeInBrowser, launchBrowser, listen, PHONE, Visit } from "./helpers/browser.js";
import { v2Record } from "./helpers/fixture.js";
import { SCORECARD_KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

describeInBrowser("the market-maker and operator pages in Chromium", () => {
  let world: World;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    world = await scorecardWorld();
    // Yesterday is 2025-03-03 (one market missing); its deadline passed an hour ago.
    world.setClock(new Date("2025-03-04T13:00:00Z"));
    // The fixture was loaded at the real time: fixed times, so the screenshots stay the same.
    const { db, stores } = world.t.database;
    const at = new Date("2025-02-28T09:00:00Z");
    await db.updateTable("api_keys").set({ created_at: at }).execute();
    await db
      .updateTable("api_keys")
      .set({ revoked_at: at })
      .where("revoked_at", "is not", null)
      .execute();
    await db.updateTable("reference_data_version").set({ changed_at: at }).execute();
    await stores.operator.markSynced(new Date("2025-03-04T06:05:00Z"));
    // A correction whose total is not the sum of its sides: a report with a quality flag.
    const corrected = await world.t.request({
      method: "POST",
      url: "/api/v2/report",
      key: SCORECARD_KEYS.acme,
      payload: {
        data: [v2Record({ date: "2025-03-03", baseCoinId: "uniswap", bidAskDepth200: 1 })],
      },
    });
    expect(corrected.statusCode, corrected.body).toBe(201);
    base = await listen(world.t);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await world?.t.close();
  });

  async function visitAs(key: string, viewport?: { width: number; height: number }) {
    const visit = await Visit.open(browser, base, viewport);
    await visit.signIn(key);
    return visit;
  }

  it("shows a market maker yesterday's coverage and eligibility", async () => {
    const visit = await visitAs(SCORECARD_KEYS.acme);
    try {
      expect(new URL(visit.page.url()).pathname).toBe("/app/overview");
      const markets = await visit.tableRows("Obligation markets on 2025-03-03");
      expect(markets).toHaveLength(8);
      expect(markets[0]).toBe("chainlink | binance | EUR | spot | Missing | — | — | —");
      expect(markets[4]).toBe(
        "chainlink | binance | usd-coin | spot | Submitted | On time | Missed: minTopOfBookPercentage | Ineligible",
      );
      expect(await visit.tableRows("Eligibility of the 7 reports dated 2025-03-03")).toEqual([
        "eligible | 4 | Matched with market data",
        "exchange_market_data_missing | 0 | No market data is collected for the exchange",
        "base_not_traded | 0 | The base coin is not traded on the exchange (for this instrument type)",
        "pair_not_found | 3 | The pair (base and quote) does not exist on the exchange",
        "before_collection_start | 0 | The report's date is before market data collection began for the pair",
      ]);
      await visit.check("market-maker-overview");
      // Another day through the form: the late GBP report of 2025-03-02.
      await visit.page.getByLabel("Day").fill("2025-03-02");
      await Promise.all([
        visit.page.waitForNavigation(),
        visit.page.getByRole("button", { name: "Show" }).click(),
      ]);
      const day2 = await visit.tableRows("Obligation markets on 2025-03-02");
      expect(day2[1]).toBe(
        "chainlink | binance | GBP | spot | Submitted | Late | Met | Ineligible",
      );
      await visit.check();
    } finally {
      await visit.close();
    }
  });

  it("shows the overview on a phone-width screen", async () => {
    const visit = await visitAs(SCORECARD_KEYS.acme, PHONE);
    try {
      expect(await visit.tableRows("Obligation markets on 2025-03-03")).toHaveLength(8);
      await visit.check("market-maker-overview-phone");
    } finally {
      await visit.close();
    }
  });

  it("filters the reports table and pages through it", async () => {
    const visit = await visitAs(SCORECARD_KEYS.acme);
    try {
      expect(await visit.goto("/app/reports")).toBe(200);
      const api = await world.t.request({
        url: "/api/v1/reports?pageSize=1",
        key: SCORECARD_KEYS.acme,
      });
      const all = await visit.page.locator("#reports caption").textContent();
      expect(all).toBe(`Reports (${api.json().totalCount} matching)`);
      await visit.check("market-maker-reports");
      await visit.page.getByLabel("Base coin").selectOption("uniswap");
      await visit.page.getByLabel("Per page").selectOption("25");
      await Promise.all([
        visit.page.waitForNavigation(),
        visit.page.getByRole("button", { name: "Apply" }).click(),
      ]);
      const rows = await visit.tableRows("Reports (5 matching)");
      expect(rows).toEqual(
        ["05", "04", "03", "02", "01"].map(
          (d) =>
            `2025-03-${d} | Binance | UNI | tether | 6,000 | 6,100 | 0.25 | 42.5 | eligible | ${
              d === "03" ? "Total ≠ bid + ask" : "None"
            }`,
        ),
      );
      const csv = visit.page.getByRole("link", { name: "Download CSV" });
      expect(await csv.getAttribute("href")).toBe("/app/reports.csv?baseCoinId=uniswap");
      await visit.check();
    } finally {
      await visit.close();
    }
  });

  it("shows the operator its organizations, engagements, keys and market data", async () => {
    const visit = await visitAs(SCORECARD_KEYS.operator);
    try {
      expect(new URL(visit.page.url()).pathname).toBe("/app/organizations");
      expect(await visit.tableRows("Organizations (4)")).toEqual([
        "acme | Acme Market Making | market maker | —",
        "chainlink-foundation | Chainlink Foundation | token project | chainlink",
        "globex | Globex Liquidity | market maker | —",
        "platform | Platform | operator | —",
      ]);
      await visit.check("operator-organizations");
      await visit.page.getByRole("link", { name: "Engagements" }).click();
      await visit.page.waitForURL("**/app/engagements");
      expect(await visit.tableRows("Engagements (4)")).toHaveLength(4);
      expect(await visit.tableRows("Obligation periods (4)")).toHaveLength(4);
      await visit.check("operator-engagements");
      expect(await visit.goto("/app/keys")).toBe(200);
      expect(await visit.tableRows("API keys (5, 4 active)")).toHaveLength(5);
      await visit.check("operator-keys");
      expect(await visit.goto("/app/market-data")).toBe(200);
      expect((await visit.tableRows("Exchanges")).at(-1)).toBe(
        "nodata | No Data Exchange | No (not collected) | 0 | —",
      );
      expect(await visit.page.locator(".card dd").first().textContent()).toBe(
        "2025-03-04 06:05 UTC",
      );
      await visit.check("operator-market-data");
    } finally {
      await visit.close();
    }
  });

  it("refuses the operator pages to a market maker", async () => {
    const visit = await visitAs(SCORECARD_KEYS.acme);
    try {
      expect(await visit.goto("/app/keys")).toBe(403);
      expect(await visit.page.locator("h1").textContent()).toBe("Not available to your key");
      visit.errors.splice(0); // Chromium logs the 403 of the page itself as a console error.
      await visit.check();
    } finally {
      await visit.close();
    }
  });

  it("refuses a form without its CSRF token (403) and ends a session whose key is revoked", async () => {
    const visit = await visitAs(SCORECARD_KEYS.globex);
    try {
      await visit.page.evaluate(`document.querySelector('input[name="csrf"]').remove()`);
      const [response] = await Promise.all([
        visit.page.waitForNavigation(),
        visit.page.getByRole("button", { name: "Sign out" }).click(),
      ]);
      expect(response?.status()).toBe(403);
      expect(await visit.sessionCookie()).toBeDefined();
      visit.errors.splice(0);
      await world.t.database.stores.organizations.revokeApiKey(
        { organizationId: "globex" },
        new Date(),
      );
      expect(await visit.goto("/app/overview")).toBe(200);
      expect(new URL(visit.page.url()).pathname).toBe("/app");
      expect(await visit.page.getByLabel("API key").count()).toBe(1);
      expect(await visit.sessionCookie()).toBeUndefined();
      await visit.check();
    } finally {
      await visit.close();
    }
  });
});

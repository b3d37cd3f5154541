import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays, utcDate } from "../src/domain/dates.js";
import type { Fixture } from "../src/schemas/fixture.js";
import { loadFixture } from "../src/services/fixtures.js";
import { createOrganizationStore } from "../src/store/organization-store.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { listAll, listPage, submitAll } from "./helpers/reports.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const today = utcDate(new Date());

async function load(fixture: Partial<Fixture>) {
  await loadFixture(t.database.stores, fixture, new Date());
  t.services.referenceData.invalidate();
}

function engage(
  organization: "acme" | "globex",
  engagement: Fixture["organizations"][number]["engagements"][number],
) {
  const name = organization === "acme" ? "Acme Market Making" : "Globex Liquidity";
  return load({
    organizations: [{ id: organization, name, apiKeys: [], engagements: [engagement] }],
  });
}

const tags = (items: { orderFillVolumeTaker: number }[]) =>
  items.map((i) => i.orderFillVolumeTaker).sort((a, b) => a - b);

describe("tenant isolation", () => {
  const days = ["2025-04-01", "2025-04-02", "2025-04-03"];

  beforeAll(async () => {
    // Same keys for both organizations; acme's tags are 1xx, globex's 2xx.
    const acme = days.map((date, i) => v2Record({ date, orderFillVolumeTaker: 100 + i }));
    const globex = days.map((date, i) => v2Record({ date, orderFillVolumeTaker: 200 + i }));
    expect(await submitAll(t, KEYS.acme, acme)).toEqual({ createdCount: 3, updatedCount: 0 });
    expect(await submitAll(t, KEYS.globex, globex)).toEqual({ createdCount: 3, updatedCount: 0 });
    await submitAll(t, KEYS.acme, [
      v2Record({ date: "2025-04-01", baseCoinId: "uniswap", orderFillVolumeTaker: 150 }),
    ]);
  });

  it("keeps record keys per organization: the same key is created for each", async () => {
    const again = await submitAll(t, KEYS.globex, [
      v2Record({ date: days[0], orderFillVolumeTaker: 200 }),
    ]);
    expect(again).toEqual({ createdCount: 0, updatedCount: 1 });
  });

  it("shows each organization only its own reports", async () => {
    const query = { dateGte: days[0], dateLte: days[2] };
    expect(tags(await listAll(t, KEYS.acme, query))).toEqual([100, 101, 102, 150]);
    expect(tags(await listAll(t, KEYS.globex, query))).toEqual([200, 201, 202]);
  });

  it("never shows acme's reports to globex, even filtered by acme's coin and exchange", async () => {
    for (const query of [
      { baseCoinId: "chainlink", exchangeId: "binance", dateGte: days[0], dateLte: days[2] },
      { baseCoinId: "uniswap" },
      { exchangeId: "binance", baseCoinId: "uniswap", dateGte: days[0] },
    ]) {
      const items = await listAll(t, KEYS.globex, query);
      expect(items.every((item) => item.orderFillVolumeTaker >= 200)).toBe(true);
    }
    expect((await listPage(t, KEYS.globex, { baseCoinId: "uniswap" })).totalCount).toBe(0);
  });

  it("does not let a dry run of one organization count the other's reports as updates", async () => {
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.globex,
      headers: { "x-dry-run": "true" },
      payload: { data: [v2Record({ date: "2025-04-01", baseCoinId: "uniswap" })] },
    });
    expect(response.json()).toEqual({ createdCount: 1, updatedCount: 0 });
  });
});

describe("engagement scoping", () => {
  it("hides the reports of an engagement that has ended, whatever their date", async () => {
    const response = await submitAll(t, KEYS.acme, [
      v2Record({ date: "2024-06-01", baseCoinId: "aave", orderFillVolumeTaker: 300 }),
      v2Record({ date: "2025-06-01", baseCoinId: "aave", orderFillVolumeTaker: 301 }),
    ]);
    expect(response.createdCount).toBe(2);
    expect(await listPage(t, KEYS.acme, { baseCoinId: "aave" })).toMatchObject({
      totalCount: 0,
      items: [],
    });
    const all = await listAll(t, KEYS.acme);
    expect(all.some((item) => item.baseCoinId === "aave")).toBe(false);
  });

  it("hides the reports of an engagement that starts in the future", async () => {
    await engage("acme", {
      baseCoinId: "bitcoin",
      type: "prop",
      since: addDays(today, 1),
      until: null,
    });
    await submitAll(t, KEYS.acme, [
      v2Record({ date: "2025-05-01", baseCoinId: "bitcoin", orderFillVolumeTaker: 400 }),
    ]);
    expect((await listPage(t, KEYS.acme, { baseCoinId: "bitcoin" })).totalCount).toBe(0);
  });

  it("shows the reports of an engagement active today, also on its last day", async () => {
    await engage("globex", { baseCoinId: "aave", type: "prop", since: "2024-01-01", until: today });
    await submitAll(t, KEYS.globex, [
      v2Record({ date: "2025-05-01", baseCoinId: "aave", orderFillVolumeTaker: 500 }),
    ]);
    expect(tags(await listAll(t, KEYS.globex, { baseCoinId: "aave" }))).toEqual([500]);
  });

  it("shows a report stored while not engaged once an engagement is active", async () => {
    await submitAll(t, KEYS.globex, [
      v2Record({ date: "2025-05-02", baseCoinId: "uniswap", orderFillVolumeTaker: 600 }),
    ]);
    await submitAll(
      t,
      KEYS.globex,
      [v1Record({ date: "2025-05-03", baseCoinId: "uniswap", orderFillVolumeTaker: 601 })],
      1,
    );
    expect((await listPage(t, KEYS.globex, { baseCoinId: "uniswap" })).totalCount).toBe(0);
    await engage("globex", { baseCoinId: "uniswap", type: "exchange", since: today, until: null });
    expect(tags(await listAll(t, KEYS.globex, { baseCoinId: "uniswap" }))).toEqual([600, 601]);
  });

  it("lists a report once even when two engagements for its coin are active", async () => {
    // Loads refuse overlapping engagements now; data stored before that rule may hold them,
    // so the overlap is written straight into the store.
    await createOrganizationStore(t.database.db).upsertEngagement({
      organizationId: "acme",
      baseCoinId: "chainlink",
      type: "exchange",
      since: "2025-01-01",
      until: null,
    });
    const items = await listAll(t, KEYS.acme, {
      baseCoinId: "chainlink",
      dateGte: "2025-04-01",
      dateLte: "2025-04-03",
    });
    expect(tags(items)).toEqual([100, 101, 102]);
  });
});

describe("eligibility in the listing", () => {
  const find = async (query: Record<string, string>) => {
    const page = await listPage(t, KEYS.acme, query);
    expect(page.items).toHaveLength(1);
    return page.items[0];
  };

  it("gives each reason of spec section 3, in order of precedence", async () => {
    const date = "2024-03-01";
    await submitAll(t, KEYS.acme, [
      v2Record({ date, exchangeId: "nodata" }),
      v2Record({ date, exchangeId: "deribit", instrumentType: "perp" }),
      v2Record({ date, quoteCoinId: "usd-coin" }),
      v2Record({ date, exchangeId: "binance_futures", instrumentType: "perp" }),
      v2Record({ date }),
    ]);
    const items = await listAll(t, KEYS.acme, {
      dateGte: date,
      dateLte: date,
      baseCoinId: "chainlink",
    });
    expect(
      items.map((i) => [i.exchangeId, i.quoteCoinId, i.eligibilityStatus, i.eligibilityReason]),
    ).toEqual([
      ["binance", "tether", "eligible", null],
      ["binance", "usd-coin", "ineligible_market_data_missing", "pair_not_found"],
      ["binance_futures", "tether", "ineligible_market_data_missing", "before_collection_start"],
      ["deribit", "tether", "ineligible_market_data_missing", "base_not_traded"],
      ["nodata", "tether", "ineligible_market_data_missing", "exchange_market_data_missing"],
    ]);
  });

  it("turns a report eligible once the market data for its pair arrives", async () => {
    const query = { dateGte: "2024-03-01", dateLte: "2024-03-01", exchangeId: "binance" };
    const before = await listAll(t, KEYS.acme, query);
    expect(before.find((i) => i.quoteCoinId === "usd-coin")?.eligibilityReason).toBe(
      "pair_not_found",
    );
    await load({
      markets: [
        {
          exchangeId: "binance",
          baseCoinId: "chainlink",
          quoteCoinId: "usd-coin",
          quoteSymbol: "USDC",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    const after = await listAll(t, KEYS.acme, query);
    expect(after.find((i) => i.quoteCoinId === "usd-coin")).toMatchObject({
      eligibilityStatus: "eligible",
      eligibilityReason: null,
    });
  });

  it("turns a report eligible once collection is known to have started earlier", async () => {
    await load({
      markets: [
        {
          exchangeId: "binance_futures",
          baseCoinId: "chainlink",
          quoteCoinId: "tether",
          quoteSymbol: "USDT",
          instrumentType: "perp",
          collectedSince: "2024-02-01",
        },
      ],
    });
    const item = await find({
      dateGte: "2024-03-01",
      dateLte: "2024-03-01",
      exchangeId: "binance_futures",
    });
    expect(item).toMatchObject({ eligibilityStatus: "eligible", eligibilityReason: null });
  });

  it("turns a report ineligible when collection is found to start later", async () => {
    await load({
      markets: [
        {
          exchangeId: "binance",
          baseCoinId: "chainlink",
          quoteCoinId: "tether",
          quoteSymbol: "USDT",
          instrumentType: "spot",
          collectedSince: "2024-03-02",
        },
      ],
    });
    const items = await listAll(t, KEYS.acme, {
      dateGte: "2024-03-01",
      dateLte: "2024-03-01",
      exchangeId: "binance",
    });
    expect(items.map((i) => [i.quoteCoinId, i.eligibilityReason])).toEqual([
      ["tether", "before_collection_start"],
      ["usd-coin", null],
    ]);
  });
});

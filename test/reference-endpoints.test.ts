import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays, utcDate } from "../src/domain/dates.js";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function projectIds(key: string): Promise<string[]> {
  const response = await t.request({ method: "GET", url: "/api/v1/projects", key });
  expect(response.statusCode).toBe(200);
  return response.json().items.map((item: { id: string }) => item.id);
}

describe("GET /api/v1/projects", () => {
  it("lists exactly the caller's active engagements with their coin and dates", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/projects", key: KEYS.acme });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      items: [
        {
          id: "chainlink",
          symbol: "LINK",
          name: "Chainlink",
          engagementType: "project",
          engagedSince: "2024-01-01",
          engagedUntil: null,
        },
        {
          id: "uniswap",
          symbol: "UNI",
          name: "Uniswap",
          engagementType: "exchange",
          engagedSince: "2024-01-01",
          engagedUntil: null,
        },
      ],
    });
  });

  it("leaves out an engagement that has ended", async () => {
    expect(await projectIds(KEYS.acme)).not.toContain("aave");
  });

  it("shows each organization only its own engagements", async () => {
    expect(await projectIds(KEYS.globex)).toEqual(["chainlink"]);
  });

  it("counts an engagement as active from its first day through its last day", async () => {
    const today = utcDate(new Date());
    await loadFixture(
      t.database.stores,
      {
        coins: [
          { id: "starts-today", symbol: "ST", name: "Starts Today" },
          { id: "ends-today", symbol: "ET", name: "Ends Today" },
          { id: "starts-tomorrow", symbol: "SM", name: "Starts Tomorrow" },
          { id: "ended-yesterday", symbol: "EY", name: "Ended Yesterday" },
        ],
        organizations: [
          {
            id: "globex",
            name: "Globex Liquidity",
            engagements: [
              { baseCoinId: "starts-today", type: "prop", since: today, until: null },
              {
                baseCoinId: "ends-today",
                type: "project",
                since: addDays(today, -30),
                until: today,
              },
              {
                baseCoinId: "starts-tomorrow",
                type: "exchange",
                since: addDays(today, 1),
                until: null,
              },
              {
                baseCoinId: "ended-yesterday",
                type: "project",
                since: addDays(today, -30),
                until: addDays(today, -1),
              },
            ],
          },
        ],
      },
      new Date(),
    );
    expect(await projectIds(KEYS.globex)).toEqual(["chainlink", "ends-today", "starts-today"]);
    const items = (
      await t.request({ method: "GET", url: "/api/v1/projects", key: KEYS.globex })
    ).json().items;
    expect(items).toContainEqual({
      id: "ends-today",
      symbol: "ET",
      name: "Ends Today",
      engagementType: "project",
      engagedSince: addDays(today, -30),
      engagedUntil: today,
    });
    expect(await projectIds(KEYS.acme)).toEqual(["chainlink", "uniswap"]);
  });

  it("answers 401 without a key", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/projects" });
    expect(response.statusCode).toBe(401);
  });
});

describe("GET /api/v1/exchanges", () => {
  it("lists every exchange with its markets, data collection and group", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/exchanges", key: KEYS.acme });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      items: [
        {
          id: "binance",
          name: "Binance",
          spot: true,
          derivatives: false,
          marketData: true,
          group: "binance",
        },
        {
          id: "binance_futures",
          name: "Binance (Futures)",
          spot: false,
          derivatives: true,
          marketData: true,
          group: "binance",
        },
        {
          id: "deribit",
          name: "Deribit",
          spot: false,
          derivatives: true,
          marketData: true,
          group: "deribit",
        },
        {
          id: "kraken",
          name: "Kraken",
          spot: true,
          derivatives: false,
          marketData: true,
          group: "kraken",
        },
        {
          id: "nodata",
          name: "No Data Exchange",
          spot: true,
          derivatives: false,
          marketData: false,
          group: "nodata",
        },
      ],
    });
  });

  it("shows every organization the same exchanges", async () => {
    const acme = await t.request({ method: "GET", url: "/api/v1/exchanges", key: KEYS.acme });
    const globex = await t.request({ method: "GET", url: "/api/v1/exchanges", key: KEYS.globex });
    expect(globex.json()).toEqual(acme.json());
  });

  it("lists an exchange added by a later fixture", async () => {
    await loadFixture(
      t.database.stores,
      {
        exchanges: [
          { id: "bybit", name: "Bybit", spot: true, derivatives: true, marketData: true },
        ],
      },
      new Date(),
    );
    t.services.referenceData.invalidate();
    const response = await t.request({ method: "GET", url: "/api/v1/exchanges", key: KEYS.acme });
    expect(response.json().items.map((e: { id: string }) => e.id)).toEqual([
      "binance",
      "binance_futures",
      "bybit",
      "deribit",
      "kraken",
      "nodata",
    ]);
    expect(response.json().items[2]).toEqual({
      id: "bybit",
      name: "Bybit",
      spot: true,
      derivatives: true,
      marketData: true,
      group: "bybit",
    });
  });

  it("answers 401 without a key", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/exchanges" });
    expect(response.statusCode).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../src/domain/errors.js";
import type { Fixture } from "../src/schemas/fixture.js";
import { createAdminServices } from "../src/services/admin.js";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture } from "./helpers/fixture.js";

/** Obligation periods: the schema's rules, the checks against stored data, fixture loading. */
let t: TestApp;
let admin: ReturnType<typeof createAdminServices>;
beforeAll(async () => {
  t = await startTestApp();
  admin = createAdminServices(t.database.stores, {
    coinGecko: () => {
      throw new Error("no CoinGecko in this test");
    },
  });
});
afterAll(async () => t?.close());

const period = (overrides: Record<string, unknown> = {}) => ({
  since: "2025-01-01",
  until: null,
  markets: [
    { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
    { exchangeId: "kraken", quote: "USD", instrumentType: "spot" },
  ],
  kpis: { minBidDepth200: 5000, maxBidAskSpread: 1 },
  ...overrides,
});

/** A market no exchange collects data for: any pair of it is a market to report. */
const noData = [{ exchangeId: "nodata", quote: "tether", instrumentType: "spot" }];

/** The problems a refused `set` names. */
async function problemsOf(work: Promise<unknown>) {
  const error = await work.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).problems;
}

describe("obligation set", () => {
  it("stores a period and lists it with its markets and KPIs", async () => {
    await admin.obligations.set("acme", "chainlink", period());
    expect(await admin.obligations.list({ organizationId: "acme" })).toEqual([
      {
        organizationId: "acme",
        organizationName: "Acme Market Making",
        baseCoinId: "chainlink",
        since: "2025-01-01",
        until: null,
        markets: [
          { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
          { exchangeId: "kraken", quote: "USD", instrumentType: "spot" },
        ],
        kpis: { minBidDepth200: 5000, maxBidAskSpread: 1 },
      },
    ]);
  });

  it("the same since updates the period: markets and KPIs replaced", async () => {
    await admin.obligations.set(
      "acme",
      "chainlink",
      period({
        markets: [{ exchangeId: "binance_futures", quote: "tether", instrumentType: "perp" }],
        kpis: { minTopOfBookPercentage: 40 },
      }),
    );
    const [stored] = await admin.obligations.list({
      organizationId: "acme",
      baseCoinId: "chainlink",
    });
    expect(stored?.markets).toEqual([
      { exchangeId: "binance_futures", quote: "tether", instrumentType: "perp" },
    ]);
    expect(stored?.kpis).toEqual({ minTopOfBookPercentage: 40 });
    await admin.obligations.set("acme", "chainlink", period());
  });

  it("refuses an overlapping period, and accepts one after the stored one is ended", async () => {
    const overlap = await problemsOf(
      admin.obligations.set("acme", "chainlink", period({ since: "2025-06-01" })),
    );
    expect(overlap).toEqual([
      {
        path: "since",
        message:
          "overlaps the stored obligation period for 'chainlink' from 2025-01-01 to open end of 'acme' (end it first)",
      },
    ]);
    expect(await admin.obligations.end("acme", "chainlink", "2025-05-31")).toEqual({
      organizationId: "acme",
      baseCoinId: "chainlink",
      until: "2025-05-31",
    });
    await admin.obligations.set("acme", "chainlink", period({ since: "2025-06-01" }));
    const listed = await admin.obligations.list({
      organizationId: "acme",
      baseCoinId: "chainlink",
    });
    expect(listed.map((p) => [p.since, p.until])).toEqual([
      ["2025-01-01", "2025-05-31"],
      ["2025-06-01", null],
    ]);
  });

  it("end names what it cannot find", async () => {
    await expect(admin.obligations.end("acme", "chainlink", "2024-01-01")).rejects.toThrow(
      "no obligation period of 'acme' for 'chainlink' holds 2024-01-01",
    );
    await expect(admin.obligations.end("nobody", "chainlink", "2025-01-01")).rejects.toThrow(
      "organization 'nobody' does not exist",
    );
    expect(await problemsOf(admin.obligations.end("acme", "chainlink", "2025-02-30"))).toEqual([
      { path: "date", message: "Invalid date, expected YYYY-MM-DD" },
    ]);
  });

  it("names each unknown market, wrong type and lower-case fiat quote", async () => {
    const problems = await problemsOf(
      admin.obligations.set(
        "acme",
        "uniswap",
        period({
          markets: [
            { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
            { exchangeId: "nowhere", quote: "tether", instrumentType: "spot" },
            { exchangeId: "binance", quote: "tether", instrumentType: "perp" },
            { exchangeId: "kraken", quote: "USD", instrumentType: "spot" },
            { exchangeId: "nodata", quote: "usd", instrumentType: "spot" },
            { exchangeId: "nodata", quote: "EUR", instrumentType: "spot" },
            { exchangeId: "kraken", quote: "tether", instrumentType: "perp" },
            { exchangeId: "binance", quote: "USDT", instrumentType: "spot" },
          ],
        }),
      ),
    );
    expect(problems).toEqual([
      { path: "markets.1", message: "unknown exchange 'nowhere'" },
      {
        path: "markets.2",
        message:
          "exchange 'binance' has no perp markets; its perp reports are stored under 'binance_futures': name that",
      },
      { path: "markets.3", message: "unknown market: kraken has no spot market uniswap/USD" },
      {
        path: "markets.4",
        message: "quote 'usd' is not a coin id; a fiat symbol is written upper-case ('USD')",
      },
      {
        path: "markets.6",
        message:
          "Exchange 'Kraken' is not a derivatives exchange; set instrumentType to 'spot' for spot data",
      },
      {
        path: "markets.7",
        message:
          "quote 'USDT' is the coin 'tether' on binance: name the coin id, as record keys do",
      },
    ]);
  });

  it("refuses a period outside the engagement, and an unknown coin", async () => {
    const outside = await problemsOf(
      admin.obligations.set("acme", "aave", period({ since: "2024-06-01", markets: noData })),
    );
    expect(outside).toEqual([
      expect.objectContaining({
        path: "since",
        message: expect.stringContaining(
          "lies outside the engagement for 'aave' from 2024-01-01 to 2024-12-31",
        ),
      }),
    ]);
    const none = await problemsOf(
      admin.obligations.set(
        "globex",
        "uniswap",
        period({ markets: [{ exchangeId: "binance", quote: "tether", instrumentType: "spot" }] }),
      ),
    );
    expect(none[0]?.message).toContain("'globex' has no engagement for 'uniswap'");
    expect(await problemsOf(admin.obligations.set("acme", "nocoin", period()))).toEqual([
      { path: "baseCoinId", message: "unknown coin 'nocoin'" },
    ]);
  });

  it("refuses malformed periods with the schema's messages", async () => {
    const problems = await problemsOf(
      admin.obligations.set("acme", "uniswap", {
        since: "2025-02-01",
        until: "2025-01-01",
        markets: [
          { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
          { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
        ],
        kpis: {
          minBidDepth200: -1,
          maxBidAskSpread: 101,
          minAskDepth50: "5",
          minDepth: 3,
          minTopOfBookPercentage: Number.POSITIVE_INFINITY,
        },
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: "markets.1", message: "duplicate of markets.0" },
        { path: "kpis.minBidDepth200", message: "Number must be greater than or equal to 0" },
        { path: "kpis.maxBidAskSpread", message: "Number must be less than or equal to 100" },
        { path: "kpis.minAskDepth50", message: "Expected number, received string" },
      ]),
    );
    expect(problems.some((p) => p.path === "kpis" && p.message.includes("minDepth"))).toBe(true);
    expect(problems.some((p) => p.path === "kpis.minTopOfBookPercentage")).toBe(true);
    expect(
      await problemsOf(admin.obligations.set("acme", "uniswap", period({ markets: [] }))),
    ).toEqual([{ path: "markets", message: "Array must contain at least 1 element(s)" }]);
    const reversed = await problemsOf(
      admin.obligations.set(
        "acme",
        "uniswap",
        period({ since: "2025-02-01", until: "2025-01-01" }),
      ),
    );
    expect(reversed).toEqual([{ path: "until", message: "until must not be before since" }]);
  });
});

/** A fixture whose engagements carry obligations. */
function fixtureWith(obligations: unknown[], coin = "uniswap"): Fixture {
  const fixture = baseFixture();
  const [acme] = fixture.organizations;
  if (acme === undefined) throw new Error("no acme");
  acme.engagements = acme.engagements.map((e) =>
    e.baseCoinId === coin ? { ...e, obligations: obligations as never } : e,
  );
  return fixture;
}

describe("fixture obligations", () => {
  const uniswap = (overrides: Record<string, unknown> = {}) =>
    period({
      markets: [{ exchangeId: "binance", quote: "tether", instrumentType: "spot" }],
      ...overrides,
    });

  it("loads the obligations of an engagement, then changes nothing on a second load", async () => {
    const fixture = fixtureWith([
      uniswap({ until: "2025-12-31" }),
      uniswap({ since: "2026-01-01" }),
    ]);
    expect((await loadFixture(t.database.stores, fixture, new Date())).changed).toBe(2);
    expect((await loadFixture(t.database.stores, fixture, new Date())).changed).toBe(0);
    const listed = await admin.obligations.list({ organizationId: "acme", baseCoinId: "uniswap" });
    expect(listed.map((p) => [p.since, p.until])).toEqual([
      ["2025-01-01", "2025-12-31"],
      ["2026-01-01", null],
    ]);
  });

  it("loading again with other values updates the period", async () => {
    const fixture = fixtureWith([
      uniswap({ until: "2025-12-31", kpis: { minBidDepth50: 100 } }),
      uniswap({ since: "2026-01-01" }),
    ]);
    expect((await loadFixture(t.database.stores, fixture, new Date())).changed).toBe(1);
    const [first] = await admin.obligations.list({ organizationId: "acme", baseCoinId: "uniswap" });
    expect(first?.kpis).toEqual({ minBidDepth50: 100 });
  });

  it("refuses the whole fixture naming the bad entry", async () => {
    const fixture = fixtureWith([
      uniswap({ since: "2027-01-01" }),
      uniswap({
        since: "2026-01-01",
        markets: [
          { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
          { exchangeId: "binance", quote: "USDC", instrumentType: "spot" },
        ],
      }),
    ]);
    fixture.coins.push({ id: "extra-coin", symbol: "EXTRA", name: "Extra" });
    const error = await loadFixture(t.database.stores, fixture, new Date()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problems).toEqual([
      {
        path: "organizations.0.engagements.1.obligations.1.markets.1",
        message: "unknown market: binance has no spot market uniswap/USDC",
      },
      {
        path: "organizations.0.engagements.1.obligations.1",
        message: "overlaps organizations.0.engagements.1.obligations.0",
      },
    ]);
    // Nothing of it was loaded.
    expect(await t.database.stores.references.snapshot()).not.toMatchObject({
      snapshot: { coins: expect.arrayContaining([expect.objectContaining({ id: "extra-coin" })]) },
    });
  });

  it("refuses a malformed obligation by its path, before anything is loaded", async () => {
    const fixture = fixtureWith([
      uniswap({
        markets: [
          { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
          { exchangeId: "binance", quote: "tether", instrumentType: "swap" },
        ],
      }),
    ]);
    const error = await loadFixture(t.database.stores, fixture, new Date()).catch(
      (e: unknown) => e,
    );
    expect((error as ValidationError).problems).toEqual([
      {
        path: "organizations.0.engagements.1.obligations.0.markets.1.instrumentType",
        message: "Invalid enum value. Expected 'spot' | 'perp', received 'swap'",
      },
    ]);
  });

  it("refuses a period that leaves its engagement, or overlaps a stored one it does not list", async () => {
    const outside = fixtureWith([period({ since: "2023-06-01", markets: noData })], "aave");
    const error = await loadFixture(t.database.stores, outside, new Date()).catch(
      (e: unknown) => e,
    );
    expect((error as ValidationError).problems).toEqual([
      expect.objectContaining({ path: "organizations.0.engagements.2.obligations.0.since" }),
    ]);
    const overlapping = fixtureWith([uniswap({ since: "2025-06-01", until: "2025-06-30" })]);
    const clash = await loadFixture(t.database.stores, overlapping, new Date()).catch(
      (e: unknown) => e,
    );
    expect((clash as ValidationError).problems).toEqual([
      {
        path: "organizations.0.engagements.1.obligations.0",
        message:
          "overlaps the stored obligation period for 'uniswap' from 2025-01-01 to 2025-12-31 of 'acme' (end it first)",
      },
    ]);
  });
});

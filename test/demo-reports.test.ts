import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { DemoFixture, DemoReport } from "../src/services/demo-reports.js";
import { generateDemoReports } from "../src/services/demo-reports.js";

interface ReferenceFixture extends DemoFixture {
  coins: { id: string; symbol: string; name: string }[];
  exchanges: (DemoFixture["exchanges"][number] & { name: string; group?: string })[];
  markets: (DemoFixture["markets"][number] & { collectedSince: string })[];
  organizations: (DemoFixture["organizations"][number] & {
    name: string;
    apiKeys: (string | { key: string; revoked?: boolean })[];
  })[];
}

const fixture = JSON.parse(
  readFileSync(new URL("../demo/reference.json", import.meta.url), "utf8"),
) as ReferenceFixture;

const TODAY = "2026-11-22";
const pairOf = (r: DemoReport) =>
  [
    r.baseCoinId,
    r.exchangeId,
    r.quoteCoinId ?? r.quoteCoinSymbol?.toUpperCase(),
    r.instrumentType ?? "spot",
  ].join("|");
const DAYS = 90;
const reports = generateDemoReports({
  fixture,
  organizationId: "demo-mm",
  today: TODAY,
  days: DAYS,
});

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const BANDS = ["Tob", "10", "25", "50", "100", "200"] as const;
const METRICS = [
  ...BANDS.flatMap((band) => [`bidDepth${band}`, `askDepth${band}`]),
  "bidAskDepth50",
  "bidAskDepth100",
  "bidAskDepth200",
  "bidAskSpread",
  "topOfBookPercentage",
  "orderFillVolumeMaker",
  "orderFillVolumeTaker",
  "orderFillVolumeMakerTob",
] as const;

function metric(report: DemoReport, name: string): number {
  return (report as unknown as Record<string, number>)[name] ?? Number.NaN;
}

function recordKey(r: DemoReport): string {
  return [r.date, r.exchangeId, r.baseCoinId, r.quoteCoinId ?? r.quoteCoinSymbol, r.instrumentType]
    .map(String)
    .join("|");
}

/** Every rule of the value checks a report breaks, as readable strings. */
function valueProblems(r: DemoReport): string[] {
  const problems: string[] = [];
  if (r.quoteCoinId === undefined && r.quoteCoinSymbol === undefined) problems.push("no quote");
  if (r.instrumentType !== "spot" && r.instrumentType !== "perp") problems.push("instrumentType");
  for (const name of METRICS) {
    const value = metric(r, name);
    if (!Number.isFinite(value) || value < 0) problems.push(`${name} = ${value}`);
    if (name !== "bidAskSpread" && Math.round(value * 100) / 100 !== value) {
      problems.push(`${name} not rounded to cents: ${value}`);
    }
  }
  for (const side of ["bid", "ask"]) {
    const depths = BANDS.map((band) => metric(r, `${side}Depth${band}`));
    if (depths.some((d, i) => i > 0 && d < (depths[i - 1] ?? 0))) {
      problems.push(`${side} depths not increasing: ${depths.join(", ")}`);
    }
  }
  for (const band of ["50", "100", "200"]) {
    const sum = metric(r, `bidDepth${band}`) + metric(r, `askDepth${band}`);
    if (Math.abs(metric(r, `bidAskDepth${band}`) - sum) > 0.005)
      problems.push(`bidAskDepth${band}`);
  }
  if (r.bidAskSpread < 0.02 || r.bidAskSpread > 1.5) problems.push(`spread ${r.bidAskSpread}`);
  if (r.topOfBookPercentage > 100) problems.push(`topOfBook ${r.topOfBookPercentage}`);
  if (r.orderFillVolumeMakerTob > r.orderFillVolumeMaker) problems.push("makerTob > maker");
  return problems;
}

/** The eligibility rules of spec section 3, in the CONTRACT's order of precedence. */
function eligibilityReason(r: DemoReport): string | null {
  const exchange = fixture.exchanges.find((e) => e.id === r.exchangeId);
  if (!exchange?.marketData) return "exchange_market_data_missing";
  const ofBase = fixture.markets.filter(
    (m) => m.exchangeId === r.exchangeId && m.baseCoinId === r.baseCoinId,
  );
  if (ofBase.length === 0) return "base_not_traded";
  const market = ofBase.find(
    (m) =>
      m.instrumentType === r.instrumentType &&
      (r.quoteCoinId
        ? m.quoteCoinId === r.quoteCoinId
        : m.quoteSymbol?.toUpperCase() === r.quoteCoinSymbol?.toUpperCase()),
  );
  if (!market) return "pair_not_found";
  return r.date < market.collectedSince ? "before_collection_start" : null;
}

describe("demo/reference.json", () => {
  const coinIds = new Set(fixture.coins.map((c) => c.id));
  const exchangeIds = new Set(fixture.exchanges.map((e) => e.id));

  it("lists enough coins, with the quote coins, and unique ids", () => {
    expect(fixture.coins.length).toBeGreaterThanOrEqual(35);
    expect(coinIds.size).toBe(fixture.coins.length);
    for (const id of ["tether", "usd-coin", "bitcoin", "ethereum"]) expect(coinIds).toContain(id);
    for (const coin of fixture.coins) {
      expect(coin.symbol).toBe(coin.symbol.toUpperCase());
      expect(coin.name.length).toBeGreaterThan(0);
    }
  });

  it("lists enough exchanges, one of them without market data", () => {
    expect(fixture.exchanges.length).toBeGreaterThanOrEqual(14);
    expect(exchangeIds.size).toBe(fixture.exchanges.length);
    expect(fixture.exchanges.some((e) => !e.marketData)).toBe(true);
    for (const e of fixture.exchanges) expect(e.spot || e.derivatives).toBe(true);
  });

  it("pairs each spot venue of a shared group with one derivatives venue", () => {
    const groups = new Map<string, ReferenceFixture["exchanges"]>();
    for (const e of fixture.exchanges) {
      const group = e.group ?? e.id;
      groups.set(group, [...(groups.get(group) ?? []), e]);
    }
    const pairs = [...groups.values()].filter((members) => members.length > 1);
    expect(pairs.length).toBeGreaterThanOrEqual(5);
    for (const members of pairs) {
      expect(members).toHaveLength(2);
      expect(members.filter((e) => e.spot && !e.derivatives)).toHaveLength(1);
      expect(members.filter((e) => e.derivatives && !e.spot)).toHaveLength(1);
    }
  });

  it("has markets on known coins and exchanges that fit the venue, each pair once", () => {
    const keys = new Set<string>();
    for (const m of fixture.markets) {
      expect(coinIds).toContain(m.baseCoinId);
      if (m.quoteCoinId !== undefined) expect(coinIds).toContain(m.quoteCoinId);
      expect(m.quoteCoinId ?? m.quoteSymbol).toBeTruthy();
      const exchange = fixture.exchanges.find((e) => e.id === m.exchangeId);
      expect(exchange, m.exchangeId).toBeDefined();
      expect(m.instrumentType === "spot" ? exchange?.spot : exchange?.derivatives).toBe(true);
      expect(m.collectedSince).toMatch(DATE);
      expect(m.collectedSince < TODAY).toBe(true);
      keys.add(
        [m.exchangeId, m.baseCoinId, m.quoteCoinId ?? m.quoteSymbol, m.instrumentType].join(),
      );
    }
    expect(keys.size).toBe(fixture.markets.length);
    expect(fixture.markets.some((m) => m.instrumentType === "perp")).toBe(true);
    expect(fixture.markets.some((m) => m.quoteCoinId === undefined)).toBe(true);
  });

  it("has the demo organizations, their keys and engagements on known coins", () => {
    const demo = fixture.organizations.find((o) => o.id === "demo-mm");
    const other = fixture.organizations.find((o) => o.id === "other-mm");
    expect(demo?.apiKeys).toContain("demo-key-3f9c2b7e41d84a6c9b0e5d1a");
    expect(other?.apiKeys).toContain("other-key-8d2e6f1a0c4b4e7f9a3d5c2b");
    expect(demo?.engagements.length).toBeGreaterThanOrEqual(10);
    expect(other?.engagements.length).toBeGreaterThanOrEqual(1);
    for (const org of fixture.organizations) {
      for (const e of org.engagements) {
        expect(coinIds).toContain(e.baseCoinId);
        expect(["project", "exchange", "prop"]).toContain(e.type);
        expect(e.since).toMatch(DATE);
        if (e.until != null) expect(e.until >= e.since).toBe(true);
      }
    }
  });
});

describe("generateDemoReports", () => {
  it("is deterministic", () => {
    const again = generateDemoReports({
      fixture: structuredClone(fixture),
      organizationId: "demo-mm",
      today: TODAY,
      days: DAYS,
    });
    expect(again).toEqual(reports);
    expect(JSON.stringify(again)).toBe(JSON.stringify(reports));
  });

  it("produces several thousand reports with unique record keys", () => {
    expect(reports.length).toBeGreaterThan(5000);
    expect(new Set(reports.map(recordKey)).size).toBe(reports.length);
  });

  it("dates every report in the window, or on an obligation market-day before it, strictly before today", () => {
    const owed = new Set(
      (fixture.organizations.find((o) => o.id === "demo-mm")?.engagements ?? []).flatMap((e) =>
        ("obligations" in e ? (e.obligations ?? []) : []).flatMap((p) =>
          p.markets.map((m) => [e.baseCoinId, m.exchangeId, m.quote, m.instrumentType].join("|")),
        ),
      ),
    );
    const outside = reports.filter(
      (r) =>
        !DATE.test(r.date) || (r.date < "2026-08-24" && !owed.has(pairOf(r))) || r.date >= TODAY,
    );
    expect(outside).toEqual([]);
    expect(reports.some((r) => r.date === "2026-11-21")).toBe(true);
  });

  it("reports the obligation markets from each period's start, before the window too", () => {
    // the-graph is owed from 2026-07-01 on binance (demo/reference.json); chainlink from 2026-08-01.
    const first = (baseCoinId: string) =>
      reports
        .filter((r) => r.baseCoinId === baseCoinId)
        .map((r) => r.date)
        .sort()[0];
    expect(first("the-graph")).toBe("2026-07-01");
    expect(first("chainlink")).toBe("2026-08-01");
    expect(first("render-token")).toBe("2026-08-24");
  });

  it("respects each engagement's since and until, and carries its type", () => {
    const engagements = fixture.organizations.find((o) => o.id === "demo-mm")?.engagements ?? [];
    const outside = reports.filter((r) => {
      const e = engagements.find((candidate) => candidate.baseCoinId === r.baseCoinId);
      return !e || r.type !== e.type || r.date < e.since || (e.until != null && r.date > e.until);
    });
    expect(outside).toEqual([]);
    const coins = new Set(reports.map((r) => r.baseCoinId));
    expect(coins).toContain("dogwifcoin");
    expect(coins).not.toContain("aptos");
    const ondo = reports.filter((r) => r.baseCoinId === "ondo-finance").map((r) => r.date);
    expect(ondo.sort()[0]).toBe("2026-09-10");
  });

  it("reports on every market of an engaged coin, spot and perp", () => {
    const markets = fixture.markets.filter((m) => m.baseCoinId === "chainlink");
    const day = reports.filter((r) => r.baseCoinId === "chainlink" && r.date === "2026-10-01");
    expect(day).toHaveLength(markets.length);
    expect(day.some((r) => r.instrumentType === "perp")).toBe(true);
    expect(day.some((r) => r.quoteCoinSymbol === "USD" && r.quoteCoinId === undefined)).toBe(true);
  });

  it("yields every eligibility outcome", () => {
    const reasons = new Set(reports.map(eligibilityReason));
    expect([...reasons].sort()).toEqual(
      [
        null,
        "base_not_traded",
        "before_collection_start",
        "exchange_market_data_missing",
        "pair_not_found",
      ].sort(),
    );
    const eligible = reports.filter((r) => eligibilityReason(r) === null).length;
    expect(eligible / reports.length).toBeGreaterThan(0.6);
  });

  it("keeps every value realistic and consistent", () => {
    // One expect per rule violation would be far too slow over thousands of records.
    const problems = reports.flatMap((r) => valueProblems(r).map((p) => `${recordKey(r)}: ${p}`));
    expect(problems).toEqual([]);
  });

  it("refuses an unknown organization and a malformed date", () => {
    const base = { fixture, organizationId: "demo-mm", today: TODAY, days: DAYS };
    expect(() => generateDemoReports({ ...base, organizationId: "nobody" })).toThrow(/nobody/);
    expect(() => generateDemoReports({ ...base, today: "2026-02-30" })).toThrow(/Invalid date/);
    expect(() => generateDemoReports({ ...base, days: 0 })).toThrow(/days/);
  });

  it("generates nothing for an organization whose engagements have not started", () => {
    const early = generateDemoReports({
      fixture,
      organizationId: "other-mm",
      today: "2026-06-01",
      days: 30,
    });
    expect(early).toEqual([]);
  });
});

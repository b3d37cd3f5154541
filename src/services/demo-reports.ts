import type { z } from "zod";
import type { v2RecordSchema } from "../schemas/report.js";
/**
 * Deterministic demo report generator: plausible v2 submission records (spec 2.1) for the
 * engagements of one organization of the bundled demo fixture. Same input, same output, so
 * the demo data set (and any test built on it) never changes between runs.
 */

import { isCalendarDate } from "../domain/dates.js";
import type { SubmissionType } from "../domain/report.js";
import type { Fixture } from "../schemas/fixture.js";
import { type Pair, unmatchedPairs } from "./demo-pairs.js";

/** The part of the fixture file (CONTRACT section 3) the generator reads. */
export type DemoFixture = Pick<Fixture, "exchanges" | "markets" | "organizations">;

/** A v2 submission record (spec 2.1), as the schema that validates it defines it. */
export type DemoReport = z.input<typeof v2RecordSchema>;

export interface DemoReportOptions {
  fixture: DemoFixture;
  organizationId: string;
  /** The current UTC date, YYYY-MM-DD; every report is dated strictly before it. */
  today: string;
  /** How many days back from today to generate. */
  days: number;
}

const DAY_MS = 86_400_000;
/** How far back obligation market-days are generated before the window (see owedBefore). */
const OWED_DAYS_BACK = 366;
/** Reports on pairs without market data are only made for the last few days of a window. */
const UNMATCHED_DAYS = 3;
/** Relative liquidity of well-known venues; anything else gets 0.5. */
const VENUE_WEIGHT: Record<string, number> = {
  binance: 1.6,
  binance_futures: 2.4,
  okex: 1.1,
  okex_swap: 1.8,
  bybit_spot: 1,
  bybit: 1.8,
  gdax: 1,
  kraken: 0.7,
};
/** Depth at each band as a share of depth at 200 bps: [min, max] for tob, 10, 25, 50, 100. */
const DEPTH_SHAPE: [number, number][] = [
  [0.015, 0.05],
  [0.07, 0.14],
  [0.18, 0.3],
  [0.35, 0.5],
  [0.6, 0.78],
];

export function generateDemoReports(options: DemoReportOptions): DemoReport[] {
  const { fixture, organizationId, today, days } = options;
  const todayMs = parseDate(today);
  if (!Number.isInteger(days) || days < 1) throw new Error("days must be a positive integer");
  const organization = fixture.organizations.find((o) => o.id === organizationId);
  if (!organization) throw new Error(`Unknown organization '${organizationId}'`);

  const reports: DemoReport[] = [];
  for (const engagement of organization.engagements) {
    const first = Math.max(parseDate(engagement.since), todayMs - days * DAY_MS);
    const last = Math.min(
      todayMs - DAY_MS,
      engagement.until ? parseDate(engagement.until) : Infinity,
    );
    if (first > last) continue;
    const markets: Pair[] = fixture.markets
      .filter((m) => m.baseCoinId === engagement.baseCoinId)
      .flatMap((m) => {
        const quote = m.quoteCoinId
          ? { quoteCoinId: m.quoteCoinId }
          : m.quoteSymbol
            ? { quoteCoinSymbol: m.quoteSymbol }
            : undefined;
        const { exchangeId, baseCoinId, instrumentType } = m;
        return quote ? [{ exchangeId, baseCoinId, quote, instrumentType }] : [];
      });
    const unmatched = unmatchedPairs(fixture, engagement.baseCoinId);
    for (let day = first; day <= last; day += DAY_MS) {
      const pairs = day > last - UNMATCHED_DAYS * DAY_MS ? [...markets, ...unmatched] : markets;
      for (const pair of pairs)
        reports.push(makeReport(organizationId, pair, day, engagement.type));
    }
    for (const { pair, day } of owedBefore(first, engagement, markets, todayMs))
      reports.push(makeReport(organizationId, pair, day, engagement.type));
  }
  return reports.sort((a, b) => compare(sortKey(a), sortKey(b)));
}

type DemoEngagement = DemoFixture["organizations"][number]["engagements"][number];

/**
 * The obligation market-days before the window (from each period's start, at most a year
 * back): a range reaching back to an obligation's start shows it reported as owed, not missing
 * for want of generated data.
 */
function* owedBefore(
  windowStart: number,
  engagement: DemoEngagement,
  markets: Pair[],
  todayMs: number,
) {
  const obligations = "obligations" in engagement ? (engagement.obligations ?? []) : [];
  for (const period of obligations) {
    const from = Math.max(
      parseDate(period.since),
      parseDate(engagement.since),
      todayMs - OWED_DAYS_BACK * DAY_MS,
    );
    const until = period.until ? parseDate(period.until) : Infinity;
    const to = Math.min(windowStart - DAY_MS, until);
    // An obligation names a market by its record key: the quote's coin id, else its symbol.
    const owed = markets.filter((pair) =>
      period.markets.some(
        (m) =>
          m.exchangeId === pair.exchangeId &&
          m.instrumentType === pair.instrumentType &&
          m.quote ===
            ("quoteCoinId" in pair.quote
              ? pair.quote.quoteCoinId
              : pair.quote.quoteCoinSymbol.toUpperCase()),
      ),
    );
    for (let day = from; day <= to; day += DAY_MS) for (const pair of owed) yield { pair, day };
  }
}

/** The pair's profile: fixed per pair, the daily draw varies around it. */
function pairProfile(organizationId: string, pair: Pair) {
  const quoteKey =
    "quoteCoinId" in pair.quote ? pair.quote.quoteCoinId : pair.quote.quoteCoinSymbol;
  const pairKey = [organizationId, pair.exchangeId, pair.baseCoinId, quoteKey, pair.instrumentType];
  const profile = mulberry32(fnv1a(pairKey.join("|")));
  const weight = (VENUE_WEIGHT[pair.exchangeId] ?? 0.5) * (quoteKey === "tether" ? 1 : 0.35);
  const depth200 = 40_000 * 30 ** profile() * weight;
  const shape = DEPTH_SHAPE.map(([min, max]) => min + (max - min) * profile());
  // Thinner books quote wider spreads.
  const baseSpread = 0.08 * Math.sqrt(200_000 / depth200) * (0.6 + 0.8 * profile());
  const baseTob = 35 + 55 * profile();
  const turnover = 0.8 + 5 * profile();
  const phase = profile() * 2 * Math.PI;
  return { key: pairKey.join("|"), depth200, shape, baseSpread, baseTob, turnover, phase };
}

function makeReport(
  organizationId: string,
  pair: Pair,
  day: number,
  type: SubmissionType,
): DemoReport {
  const { key, depth200, shape, baseSpread, baseTob, turnover, phase } = pairProfile(
    organizationId,
    pair,
  );
  const rand = mulberry32(fnv1a(`${key}|${day}`));
  const dayIndex = day / DAY_MS;
  const trend = 1 + 0.2 * Math.sin(dayIndex / 9 + phase);
  const weekend = [0, 6].includes(new Date(day).getUTCDay()) ? 0.7 : 1;
  const side = (factor: number) => {
    const total = depth200 * trend * factor;
    return [...shape.map((s) => total * s * (0.97 + 0.03 * rand())), total].map(round2);
  };
  const [bidTob = 0, bid10 = 0, bid25 = 0, bid50 = 0, bid100 = 0, bid200 = 0] = side(
    0.8 + 0.4 * rand(),
  );
  const [askTob = 0, ask10 = 0, ask25 = 0, ask50 = 0, ask100 = 0, ask200 = 0] = side(
    0.8 + 0.4 * rand(),
  );
  const spread = clamp(baseSpread * (0.75 + 0.5 * rand()), 0.02, 1.5);
  const topOfBook = clamp(baseTob + 10 * (rand() - 0.5), 0, 100);
  const maker = (bid200 + ask200) * turnover * weekend * (0.7 + 0.6 * rand());
  const taker = maker * (0.05 + 0.35 * rand());
  const makerTob = maker * (topOfBook / 100) * (0.3 + 0.5 * rand());

  return {
    date: new Date(day).toISOString().slice(0, 10),
    exchangeId: pair.exchangeId,
    baseCoinId: pair.baseCoinId,
    ...pair.quote,
    bidDepthTob: bidTob,
    bidDepth10: bid10,
    bidDepth25: bid25,
    bidDepth50: bid50,
    bidDepth100: bid100,
    bidDepth200: bid200,
    askDepthTob: askTob,
    askDepth10: ask10,
    askDepth25: ask25,
    askDepth50: ask50,
    askDepth100: ask100,
    askDepth200: ask200,
    bidAskDepth50: round2(bid50 + ask50),
    bidAskDepth100: round2(bid100 + ask100),
    bidAskDepth200: round2(bid200 + ask200),
    bidAskSpread: Math.round(spread * 10_000) / 10_000,
    topOfBookPercentage: round2(topOfBook),
    orderFillVolumeMaker: round2(maker),
    orderFillVolumeTaker: round2(taker),
    orderFillVolumeMakerTob: round2(makerTob),
    instrumentType: pair.instrumentType,
    type,
  };
}

function parseDate(value: string): number {
  if (!isCalendarDate(value)) throw new Error(`Invalid date '${value}', expected YYYY-MM-DD`);
  return Date.parse(`${value}T00:00:00Z`);
}

function sortKey(r: DemoReport): string[] {
  const quote = r.quoteCoinId ?? r.quoteCoinSymbol ?? "";
  return [r.date, r.exchangeId, r.baseCoinId, quote, r.instrumentType];
}

/** Code-unit comparison, independent of the locale. */
function compare(a: string[], b: string[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? "";
    const y = b[i] ?? "";
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const clamp = (n: number, min: number, max: number): number => Math.min(max, Math.max(min, n));

function fnv1a(text: string): number {
  let hash = 2_166_136_261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16_777_619);
  return hash >>> 0;
}

/** mulberry32: a small, fast, seedable PRNG; plenty for demo data. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

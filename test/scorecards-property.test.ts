import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays } from "../src/domain/dates.js";
import {
  dayStatus,
  deadlineOf,
  failedKpis,
  isLate,
  KPI_NAMES,
  type Kpis,
  type ObligationMarket,
} from "../src/domain/obligation.js";
import { METRICS, type Metric, V1_METRICS } from "../src/domain/report.js";
import { lastDueDay } from "../src/domain/scorecard.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture } from "./helpers/fixture.js";
import { insertObligation, insertReports, setOrganizationKind } from "./helpers/obligations.js";

/**
 * Random obligations and reports, written straight into the tables: the database's scoring
 * (`/scorecards/daily`) must agree with the domain's reference functions (failedKpis,
 * dayStatus, isLate) day by day, and `/scorecards` with the counts derived from the days.
 */
const OPERATOR_KEY = "property-operator-key-0123456789abcdef";
const DEADLINE = "12:00";
const FIRST = "2025-03-01";
const LAST = "2025-03-10";
const MARKETS: ObligationMarket[] = [
  { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
  { exchangeId: "kraken", quote: "USD", instrumentType: "spot" },
  { exchangeId: "binance_futures", quote: "tether", instrumentType: "perp" },
];

let clock = new Date("2025-03-12T00:00:00Z");
let t: TestApp;
let run = 0;
beforeAll(async () => {
  const fixture = baseFixture();
  fixture.organizations.push({
    id: "platform",
    name: "Platform",
    apiKeys: [OPERATOR_KEY],
    engagements: [],
  });
  t = await startTestApp({ fixture, now: () => clock });
  await setOrganizationKind(t.database.db, "platform", "operator");
});
afterAll(async () => t?.close());

const dayIndex = fc.integer({ min: -3, max: 12 });
const value = fc.constantFrom(0, 0.5, 40, 4999, 5000, 5001);
const kpisArb = fc
  .subarray(KPI_NAMES, { minLength: 0, maxLength: 4 })
  .chain((names) =>
    fc
      .tuple(...names.map(() => value))
      .map((vs) => Object.fromEntries(names.map((n, i) => [n, vs[i]])) as Kpis),
  );
const reportArb = fc.record({
  market: fc.integer({ min: 0, max: MARKETS.length - 1 }),
  day: fc.integer({ min: 0, max: 9 }),
  v1: fc.boolean(),
  metrics: fc.tuple(...METRICS.map(() => value)),
  // Half-hour steps from 12 hours before the deadline to 36 after (the deadline included).
  arrivedHalfHours: fc.integer({ min: -24, max: 72 }),
});
const worldArb = fc.record({
  split: dayIndex,
  firstKpis: kpisArb,
  secondKpis: kpisArb,
  marketCount: fc.integer({ min: 1, max: MARKETS.length }),
  reports: fc.uniqueArray(reportArb, { maxLength: 20, selector: (r) => `${r.market}/${r.day}` }),
  // Quarter hours from 2025-03-05 00:00 to 2025-03-12 00:00.
  clockQuarterHours: fc.integer({ min: 0, max: 7 * 96 }),
});

type World = typeof worldArb extends fc.Arbitrary<infer W> ? W : never;

async function build(world: World, org: string) {
  const db = t.database.db;
  await db
    .insertInto("organizations")
    .values({ id: org, name: `Org ${org}` })
    .execute();
  // Obligations count only inside an engagement: one covering every period here.
  await db
    .insertInto("engagements")
    .values({
      id: crypto.randomUUID(),
      organization_id: org,
      base_coin_id: "chainlink",
      type: "project",
      since: "2025-01-01",
      until: null,
    })
    .execute();
  const markets = MARKETS.slice(0, world.marketCount);
  const split = addDays(FIRST, world.split);
  const periods = [
    { since: "2025-02-20", until: addDays(split, -1), kpis: world.firstKpis },
    { since: split, until: null, kpis: world.secondKpis },
  ];
  for (const p of periods) {
    await insertObligation(db, { organizationId: org, baseCoinId: "chainlink", markets, ...p });
  }
  const stored = world.reports.map((r) => {
    const date = addDays(FIRST, r.day);
    const metrics = Object.fromEntries(
      METRICS.map((m, i) => [
        m,
        r.v1 && !(V1_METRICS as readonly Metric[]).includes(m) ? null : r.metrics[i],
      ]),
    ) as Record<Metric, number | null>;
    const createdAt = new Date(
      deadlineOf(date, DEADLINE).getTime() + r.arrivedHalfHours * 1_800_000,
    );
    return { market: MARKETS[r.market] as ObligationMarket, date, metrics, createdAt };
  });
  await insertReports(
    db,
    stored.map((s) => ({
      ...s,
      organizationId: org,
      baseCoinId: "chainlink",
      eligible: s.metrics.bidDepth50 !== 0,
    })),
  );
  return { markets, periods, stored };
}

async function get(path: string, org: string) {
  const response = await t.request({
    method: "GET",
    url: `${path}?dateGte=${FIRST}&dateLte=${LAST}&organizationId=${org}`,
    key: OPERATOR_KEY,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().items;
}

describe("lastDueDay", () => {
  it("is the last day whose deadline has passed (the domain's dayStatus)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse("2024-01-01"), max: Date.parse("2027-01-01") }),
        fc.integer({ min: 0, max: 23 }),
        fc.constantFrom(0, 1, 30, 59),
        fc.boolean(),
        (ms, h, m, onTheDot) => {
          const deadlineUtc = `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
          // Sometimes exactly at a deadline, where the day is still pending.
          const now = onTheDot
            ? deadlineOf(new Date(ms).toISOString().slice(0, 10), deadlineUtc)
            : new Date(ms);
          const last = lastDueDay(now, deadlineUtc);
          const status = (date: string) =>
            dayStatus({ date, now, deadlineUtc, reported: false, failedKpis: [] });
          expect(status(last)).toBe("missing");
          expect(status(addDays(last, 1))).toBe("pending");
        },
      ),
    );
  });
});

describe("scorecards, property", () => {
  it("agree with the domain's rules day by day, and /scorecards with /scorecards/daily", async () => {
    await fc.assert(
      fc.asyncProperty(worldArb, async (world) => {
        const org = `prop-${run++}`;
        const { markets, periods, stored } = await build(world, org);
        clock = new Date(Date.parse("2025-03-05T00:00:00Z") + world.clockQuarterHours * 900_000);
        const daily = await get("/api/v1/scorecards/daily", org);

        // The reference, from the domain functions.
        const expected = [];
        for (const market of [...markets].sort(byMarket)) {
          for (let i = 0; i < 10; i++) {
            const date = addDays(FIRST, i);
            const period = periods.find(
              (p) => p.since <= date && (p.until === null || date <= p.until),
            );
            if (period === undefined) continue;
            const report = stored.find((s) => s.market === market && s.date === date);
            const failed = report === undefined ? [] : failedKpis(period.kpis, report.metrics);
            expected.push({
              date,
              exchangeId: market.exchangeId,
              quote: market.quote,
              status: dayStatus({
                date,
                now: clock,
                deadlineUtc: DEADLINE,
                reported: report !== undefined,
                failedKpis: failed,
              }),
              late: report !== undefined && isLate(date, report.createdAt, DEADLINE),
              failedKpis: failed,
            });
          }
        }
        expect(
          daily.map((d: Record<string, unknown>) => ({
            date: d.date,
            exchangeId: d.exchangeId,
            quote: d.quote,
            status: d.status,
            late: d.late,
            failedKpis: d.failedKpis,
          })),
        ).toEqual(expected);

        // /scorecards counts, derived from the days.
        const cards = await get("/api/v1/scorecards", org);
        const periodOf = (date: string) =>
          periods.find((p) => p.since <= date && (p.until === null || date <= p.until));
        expect(cards).toEqual(derive(daily, (date) => periodOf(date)?.kpis ?? {}));

        // The dashboard's read (no depth shares, medians rolled up) counts the same.
        const counts = cards.map(({ medianDepthShare200: _, ...c }: Record<string, unknown>) => c);
        const filter = {
          scope: { kind: "all" } as const,
          organizationId: org,
          dateGte: FIRST,
          dateLte: LAST,
          now: clock,
          deadlineUtc: DEADLINE,
        };
        for (const perMarket of [false, true]) {
          const read = await t.database.stores.scorecards.marketsWithMedians(filter, perMarket);
          expect(read.markets).toEqual(counts);
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 15) },
    );
  });
});

const byMarket = (a: ObligationMarket, b: ObligationMarket) =>
  `${a.exchangeId}\u0000${a.quote}\u0000${a.instrumentType}` <
  `${b.exchangeId}\u0000${b.quote}\u0000${b.instrumentType}`
    ? -1
    : 1;

/** Of the due reported days, those where each KPI applies: met unless listed as failed. */
function kpiCounts(reported: Day[], kpisOf: (date: string) => Kpis) {
  const counts: Record<string, { daysMet: number; daysMissed: number }> = {};
  for (const d of reported) {
    for (const kpi of Object.keys(kpisOf(d.date))) {
      counts[kpi] ??= { daysMet: 0, daysMissed: 0 };
      if (d.failedKpis.includes(kpi)) counts[kpi].daysMissed++;
      else counts[kpi].daysMet++;
    }
  }
  return counts;
}

type Day = Record<string, unknown> & {
  date: string;
  status: string;
  late: boolean;
  failedKpis: string[];
  eligibilityStatus: string | null;
};

/** The aggregate as the contract defines it, computed from the daily items. */
function derive(daily: Day[], kpisOf: (date: string) => Kpis) {
  const groups = new Map<string, Day[]>();
  for (const d of daily) {
    const key = [d.organizationId, d.baseCoinId, d.exchangeId, d.quote, d.instrumentType].join("/");
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  return [...groups.values()].map((days) => {
    const first = days[0] as Day;
    const due = days.filter((d) => d.status !== "pending");
    const reported = due.filter((d) => d.status === "met" || d.status === "missed");
    const met = due.filter((d) => d.status === "met").length;
    return {
      organizationId: first.organizationId,
      organizationName: first.organizationName,
      baseCoinId: first.baseCoinId,
      exchangeId: first.exchangeId,
      quote: first.quote,
      instrumentType: first.instrumentType,
      daysDue: due.length,
      daysReported: reported.length,
      daysMissing: due.length - reported.length,
      daysLate: due.filter((d) => d.late).length,
      daysEligible: reported.filter((d) => d.eligibilityStatus === "eligible").length,
      daysMet: met,
      compliance: due.length === 0 ? null : Math.round((met / due.length) * 10_000) / 10_000,
      kpis: kpiCounts(reported, kpisOf),
      daysFlagged: 0,
      medianDepthShare200: { bid: null, ask: null },
    };
  });
}

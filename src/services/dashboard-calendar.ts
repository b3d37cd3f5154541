import { type Caller, readScope } from "../domain/caller.js";
import type { DayStatus, KpiName, ObligationMarket } from "../domain/obligation.js";
import type { OrganizationStore } from "../store/organization-store.js";
import { engagedMakerName } from "./dashboard-scope.js";
import { getDailyScorecards, type ScorecardDeps, scorecardRange } from "./scorecards.js";

/** A calendar covers 90 days unless asked, and at most the daily scorecards' 366. */
export const CALENDAR_DAYS = { defaultDays: 90, maxDays: 366 };

export type CalendarDay = {
  date: string;
  status: DayStatus;
  late: boolean;
  /** A report that is not eligible (no market data matched it); false without a report. */
  ineligible: boolean;
  failedKpis: KpiName[];
};

/** What the legend names, counted per market over the range. */
export const CALENDAR_MARKS = [
  "met",
  "missed",
  "missing",
  "late",
  "ineligible",
  "pending",
] as const;
export type CalendarMark = (typeof CALENDAR_MARKS)[number];

export type CalendarMarket = ObligationMarket & {
  days: CalendarDay[];
  counts: Record<CalendarMark, number>;
};

export type CalendarPage = {
  organizationId: string;
  organizationName: string;
  baseCoinId: string;
  dateGte: string;
  dateLte: string;
  markets: CalendarMarket[];
};

type Deps = ScorecardDeps & { organizations: OrganizationStore };

/**
 * The coverage calendar of one market maker and coin (issue 14): every obligation market, one
 * cell a day, from the daily scorecards (the same judging as the API's). Days outside every
 * period are absent. Outside the caller's scope: not found.
 */
export async function calendarPage(
  deps: Deps,
  caller: Caller,
  key: { organizationId: string; baseCoinId: string },
  query: { dateGte?: string; dateLte?: string },
): Promise<CalendarPage> {
  const scope = readScope(caller);
  const organizationName = await engagedMakerName(deps, caller, key, "Calendar not found");
  const range = scorecardRange(query, deps.now(), CALENDAR_DAYS);
  const daily = await getDailyScorecards(deps, scope, { ...key, ...range });
  const markets = new Map<string, CalendarMarket>();
  for (const item of daily.items) {
    const id = `${item.exchangeId}\u0000${item.quote}\u0000${item.instrumentType}`;
    let market = markets.get(id);
    if (market === undefined) {
      market = {
        exchangeId: item.exchangeId,
        quote: item.quote,
        instrumentType: item.instrumentType,
        days: [],
        counts: { met: 0, missed: 0, missing: 0, late: 0, ineligible: 0, pending: 0 },
      };
      markets.set(id, market);
    }
    const ineligible = item.eligibilityStatus !== null && item.eligibilityStatus !== "eligible";
    market.days.push({
      date: item.date,
      status: item.status,
      late: item.late,
      ineligible,
      failedKpis: item.failedKpis,
    });
    market.counts[item.status] += 1;
    if (item.late) market.counts.late += 1;
    if (ineligible) market.counts.ineligible += 1;
  }
  return {
    organizationId: key.organizationId,
    organizationName,
    baseCoinId: key.baseCoinId,
    ...range,
    markets: [...markets.values()],
  };
}

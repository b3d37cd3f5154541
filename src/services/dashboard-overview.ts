import { type Caller, readScope } from "../domain/caller.js";
import { addDays, utcDate } from "../domain/dates.js";
import { ELIGIBILITY_REASONS, type EligibilityReason } from "../domain/report.js";
import type { DailyScorecardsResponse } from "../schemas/scorecards.js";
import type { ListDeps } from "./list-reports.js";
import { exportReports } from "./list-reports.js";
import { getDailyScorecards, type ScorecardDeps } from "./scorecards.js";

export type EligibilityBreakdown = {
  total: number;
  eligible: number;
  /** Ineligible reports by reason, every reason listed (0 when none). */
  reasons: Record<EligibilityReason, number>;
};

export type DayOverview = {
  date: string;
  /** Each obligation market of the day, as GET /api/v1/scorecards/daily lists it. */
  markets: DailyScorecardsResponse["items"];
  /** The day's reports of the listing (GET /api/v1/reports?dateGte=D&dateLte=D), counted. */
  eligibility: EligibilityBreakdown;
};

/**
 * One day of a caller's reporting (default: yesterday, UTC): each obligation market's status
 * from the daily scorecards, and the eligibility of that day's listed reports by reason.
 * Both come from the API's own services, so the page and the API cannot disagree.
 */
export async function dayOverview(
  deps: { scoring: ScorecardDeps; listing: ListDeps },
  caller: Caller,
  day: string | undefined,
): Promise<DayOverview> {
  const date = day ?? addDays(utcDate(deps.scoring.now()), -1);
  const [daily, eligibility] = await Promise.all([
    getDailyScorecards(deps.scoring, readScope(caller), { dateGte: date, dateLte: date }),
    eligibilityOf(deps.listing, caller, date),
  ]);
  return { date, markets: daily.items, eligibility };
}

async function eligibilityOf(
  deps: ListDeps,
  caller: Caller,
  date: string,
): Promise<EligibilityBreakdown> {
  const reasons = Object.fromEntries(ELIGIBILITY_REASONS.map((r) => [r, 0])) as Record<
    EligibilityReason,
    number
  >;
  let total = 0;
  let eligible = 0;
  for await (const chunk of exportReports(deps, caller, { dateGte: date, dateLte: date })) {
    for (const report of chunk) {
      total++;
      if (report.eligibilityReason === null) eligible++;
      else reasons[report.eligibilityReason]++;
    }
  }
  return { total, eligible, reasons };
}

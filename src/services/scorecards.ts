import type { ReadScope } from "../domain/caller.js";
import { addDays, EARLIEST_DATE, utcDate } from "../domain/dates.js";
import { ValidationError } from "../domain/errors.js";
import {
  type DailyScorecardsResponse,
  DEFAULT_SCORECARD_DAYS,
  MAX_DAILY_ITEMS,
  MAX_SCORECARD_DAYS,
  type ScorecardQuery,
  type ScorecardsResponse,
} from "../schemas/scorecards.js";
import type { ScorecardFilter } from "../store/scorecard-store.js";
import type { Stores } from "../store/stores.js";

export type ScorecardDeps = Pick<Stores, "scorecards"> & {
  now: () => Date;
  /** `HH:MM` (UTC), REPORT_DEADLINE_UTC; default DEFAULT_REPORT_DEADLINE_UTC. */
  deadlineUtc?: string;
};

/** The deadline when none is configured (CONTRACT section 4). */
export const DEFAULT_REPORT_DEADLINE_UTC = "12:00";

const DAY_MS = 86_400_000;
const latest = (a: string, b: string) => (a > b ? a : b);
const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;

/**
 * The range a query covers: `dateLte` defaults to yesterday (UTC), `dateGte` to 29 days
 * before `dateLte` (so the default is the 30 days ending yesterday), never before
 * EARLIEST_DATE, the first date a caller may name. A range that runs
 * backwards or over MAX_SCORECARD_DAYS is a 400 naming the parameter the caller gave. The
 * dashboard's pages pass limits of their own (a market's charts cover up to two years).
 */
export function scorecardRange(
  query: Pick<ScorecardQuery, "dateGte" | "dateLte">,
  now: Date,
  limits = { defaultDays: DEFAULT_SCORECARD_DAYS, maxDays: MAX_SCORECARD_DAYS },
): { dateGte: string; dateLte: string } {
  const dateLte = query.dateLte ?? addDays(utcDate(now), -1);
  const dateGte =
    query.dateGte ?? latest(addDays(dateLte, -(limits.defaultDays - 1)), EARLIEST_DATE);
  const path = query.dateGte !== undefined && query.dateLte === undefined ? "dateGte" : "dateLte";
  if (dateGte > dateLte) {
    throw new ValidationError([
      { path, message: `dateGte (${dateGte}) is after dateLte (${dateLte})` },
    ]);
  }
  if (daysBetween(dateGte, dateLte) > limits.maxDays) {
    throw new ValidationError([
      {
        path,
        message: `The range from dateGte to dateLte must not exceed ${limits.maxDays} days`,
      },
    ]);
  }
  return { dateGte, dateLte };
}

function filterOf(deps: ScorecardDeps, scope: ReadScope, query: ScorecardQuery): ScorecardFilter {
  const now = deps.now();
  return {
    scope,
    organizationId: query.organizationId,
    baseCoinId: query.baseCoinId,
    ...scorecardRange(query, now),
    now,
    deadlineUtc: deps.deadlineUtc ?? DEFAULT_REPORT_DEADLINE_UTC,
  };
}

/** GET /api/v1/scorecards: one scorecard per obligation market in scope (CONTRACT section 4). */
export async function getScorecards(
  deps: ScorecardDeps,
  scope: ReadScope,
  query: ScorecardQuery,
): Promise<ScorecardsResponse> {
  const filter = filterOf(deps, scope, query);
  const items = await deps.scorecards.markets(filter);
  return { dateGte: filter.dateGte, dateLte: filter.dateLte, items };
}

/**
 * GET /api/v1/scorecards/daily: every obligation market and day, pending days included. Not
 * paged: an answer over MAX_DAILY_ITEMS market-days is refused (400) before it is built, so
 * that one request cannot make the server build a very large body; narrow the filters.
 */
export async function getDailyScorecards(
  deps: ScorecardDeps,
  scope: ReadScope,
  query: ScorecardQuery,
): Promise<DailyScorecardsResponse> {
  const filter = filterOf(deps, scope, query);
  const count = await deps.scorecards.countDays(filter);
  if (count > MAX_DAILY_ITEMS) {
    throw new ValidationError([
      {
        path: "dateGte",
        message: `The answer would hold ${count} market-days, over ${MAX_DAILY_ITEMS}: narrow dateGte/dateLte or filter by organizationId or baseCoinId`,
      },
    ]);
  }
  const items = await deps.scorecards.days(filter);
  return { dateGte: filter.dateGte, dateLte: filter.dateLte, items };
}

/**
 * The dashboard's comparison of market makers (issue 14): the scorecards of a query with the
 * medians of the reports they judge, per organization and coin (and per obligation market),
 * read together.
 */
export async function getScorecardsWithMedians(
  deps: ScorecardDeps,
  scope: ReadScope,
  query: ScorecardQuery,
  options: { perMarket: boolean },
) {
  const filter = filterOf(deps, scope, query);
  const { markets, medians } = await deps.scorecards.marketsWithMedians(filter, options.perMarket);
  return { dateGte: filter.dateGte, dateLte: filter.dateLte, items: markets, medians };
}

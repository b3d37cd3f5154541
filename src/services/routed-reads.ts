import { type Caller, readScope } from "../domain/caller.js";
import type { ListQuery } from "../schemas/list-query.js";
import type { ScorecardQuery } from "../schemas/scorecards.js";
import type { ReadRouting } from "../store/read-router.js";
import type { Stores } from "../store/stores.js";
import { dayOverview } from "./dashboard-overview.js";
import { createDashboardPages } from "./dashboard-pages.js";
import { exportReports, listReportsJson } from "./list-reports.js";
import type { ReferenceDataCache } from "./reference-data.js";
import { getDailyScorecards, getScorecards } from "./scorecards.js";

/**
 * The reads that may go to a read replica (README "Read replica"): each runs on the stores the
 * routing picks for its caller (the replica's, unless the caller's own last write is not
 * there yet, or the replica lags or is down).
 */
export function createRoutedReads(
  reads: ReadRouting,
  context: { now: () => Date; deadlineUtc: string; referenceData: ReferenceDataCache },
) {
  const { now, deadlineUtc, referenceData } = context;
  const scoringOf = (readers: Stores) => ({ scorecards: readers.scorecards, now, deadlineUtc });
  const listingOf = (readers: Stores) => ({
    listing: readers.listing,
    scopedListing: readers.scopedListing,
    organizations: readers.organizations,
    now,
  });
  return {
    /** The listing response as JSON text (see listReportsJson). */
    listReportsJson: (caller: Caller, query: ListQuery) =>
      reads.read(caller.readAfter, (readers) => listReportsJson(listingOf(readers), caller, query)),
    exportReports: async function* (caller: Caller, query: ListQuery) {
      const readers = await reads.storesFor(caller.readAfter);
      yield* exportReports(listingOf(readers), caller, query);
    },
    /** Scorecards of the obligation markets in the caller's read scope. */
    getScorecards: (caller: Caller, query: ScorecardQuery) =>
      reads.read(caller.readAfter, (readers) =>
        getScorecards(scoringOf(readers), readScope(caller), query),
      ),
    getDailyScorecards: (caller: Caller, query: ScorecardQuery) =>
      reads.read(caller.readAfter, (readers) =>
        getDailyScorecards(scoringOf(readers), readScope(caller), query),
      ),
    /** A day's obligation markets and report eligibility (the dashboard's overview). */
    dayOverview: (caller: Caller, date: string | undefined) =>
      reads.read(caller.readAfter, (readers) =>
        dayOverview({ scoring: scoringOf(readers), listing: listingOf(readers) }, caller, date),
      ),
    /** What the dashboard's market, calendar and coin pages show (issue 14). */
    dashboardPages: readingFor(reads, (readers) =>
      createDashboardPages({ ...readers, ...scoringOf(readers), referenceData }),
    ),
  };
}

type CallerFunctions = Record<string, (caller: Caller, ...rest: never[]) => Promise<unknown>>;

/** Functions of a caller built per call over the stores that caller's reads may use. */
function readingFor<T extends CallerFunctions>(reads: ReadRouting, build: (s: Stores) => T): T {
  const names = Object.keys(build({} as Stores));
  return Object.fromEntries(
    names.map((name) => [
      name,
      (caller: Caller, ...rest: never[]) =>
        reads.read(caller.readAfter, (readers) => {
          const page = build(readers)[name] as T[string];
          return page(caller, ...rest);
        }),
    ]),
  ) as T;
}

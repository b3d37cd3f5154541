import { type Caller, readScope } from "../domain/caller.js";
import { storableDateRange, utcDate } from "../domain/dates.js";
import type { ListQuery } from "../schemas/list-query.js";
import type { ReportCsvItem } from "../schemas/report.js";
import type { ListCursor, ListFilter, MarketFilter, PageItem } from "../store/report-listing.js";
import type { Stores } from "../store/stores.js";
import { exportChunks } from "./export-chunks.js";
import { listPageOf } from "./list-paging.js";
import { exportScopedReports, listScopedReportsJson } from "./list-reports-scoped.js";
import { csvItemOf, listedItemJson } from "./quality-listing.js";

export type ListDeps = Pick<Stores, "listing" | "scopedListing" | "organizations"> & {
  now: () => Date;
};

/**
 * The caller's reports whose base coin has an engagement with the caller's organization that
 * is active today, filtered and paged (spec 4.4), as the JSON text of the response: its items
 * come from the database already written as JSON, so a 500-item page is not parsed and
 * printed again here. A project or operator key reads across organizations (see
 * list-reports-scoped.ts); a market maker's listing is this one, unchanged.
 */
export async function listReportsJson(
  deps: ListDeps,
  caller: Caller,
  query: ListQuery,
): Promise<string> {
  const scope = readScope(caller);
  if (scope.kind !== "organization") return listScopedReportsJson(deps, scope, query);
  const { page, pageSize } = listPageOf(query);
  const filter = await filterFor(deps, caller, query);
  const [totalCount, items] = await Promise.all([
    deps.listing.count(filter),
    pageItems(deps, filter, query),
  ]);
  const totalPages = Math.ceil(totalCount / pageSize);
  return `{"page":${page},"totalPages":${totalPages},"totalCount":${totalCount},"items":[${items.map((i) => listedItemJson(i, query)).join(",")}]}`;
}

/** The one page query (JSON and CSV alike): each item as its JSON text. */
async function pageItems(
  deps: ListDeps,
  filter: ListFilter,
  query: ListQuery,
): Promise<PageItem[]> {
  const { pageSize, offset } = listPageOf(query);
  if (offset === undefined) return [];
  return deps.listing.pageJson(filter, pageSize, offset);
}

/**
 * Every report the listing would return, in listing order, chunk by chunk (a keyset walk, so
 * a long export costs the same per chunk from start to end). With `page` set, that page only.
 * The dashboard's market page narrows it to one market (`quote`, `instrumentType`).
 */
export async function* exportReports(
  deps: ListDeps,
  caller: Caller,
  query: ListQuery & MarketFilter,
  /**
   * A market maker's reports of `query.baseCoinId` whether or not it is engaged for the coin
   * today: for a page that has checked it was engaged for it (its scorecards count them).
   */
  ownCoin = false,
): AsyncGenerator<ReportCsvItem[]> {
  const scope = readScope(caller);
  if (scope.kind !== "organization") {
    yield* exportScopedReports(deps, scope, query);
    return;
  }
  const filter =
    ownCoin && query.baseCoinId !== undefined
      ? filterOf(caller, query, [query.baseCoinId])
      : await filterFor(deps, caller, query);
  if (query.page !== undefined) {
    const items = await pageItems(deps, filter, query);
    yield items.map((item) => csvItemOf<ReportCsvItem>(item, query));
    return;
  }
  yield* exportChunks((limit, cursor: ListCursor | undefined) =>
    deps.listing.after(filter, limit, cursor, query.include === "quality"),
  );
}

/** The listing filter: the query's, within the coins the organization is engaged for today. */
async function filterFor(
  deps: ListDeps,
  caller: Caller,
  query: ListQuery & MarketFilter,
): Promise<ListFilter> {
  const engaged = await deps.organizations.activeEngagements(
    caller.organizationId,
    utcDate(deps.now()),
  );
  const engagedCoins = [...new Set(engaged.map((e) => e.baseCoinId))];
  const coins =
    query.baseCoinId === undefined
      ? engagedCoins
      : engagedCoins.filter((c) => c === query.baseCoinId);
  return filterOf(caller, query, coins);
}

/** The listing filter of the query's market, dates and `baseCoinIds`. */
function filterOf(
  caller: Caller,
  query: ListQuery & MarketFilter,
  baseCoinIds: string[],
): ListFilter {
  const dates = storableDateRange(query.dateGte, query.dateLte);
  return {
    organizationId: caller.organizationId,
    baseCoinIds,
    exchangeId: query.exchangeId,
    quote: query.quote,
    instrumentType: query.instrumentType,
    dateGte: dates.from,
    dateLte: dates.to,
  };
}

import type { ReadScope } from "../domain/caller.js";
import { storableDateRange } from "../domain/dates.js";
import type { ListQuery } from "../schemas/list-query.js";
import type { ScopedReportCsvItem } from "../schemas/report.js";
import { storableText } from "../schemas/text.js";
import type { MarketFilter } from "../store/report-listing.js";
import type { ScopedListCursor, ScopedListFilter } from "../store/report-listing-scoped.js";
import type { Stores } from "../store/stores.js";
import { exportChunks } from "./export-chunks.js";
import { listPageOf } from "./list-paging.js";
import { csvItemOf, listedItemJson } from "./quality-listing.js";

export type ScopedListDeps = Pick<Stores, "scopedListing">;
type CrossScope = Exclude<ReadScope, { kind: "organization" }>;

/**
 * The listing of a project or operator key (CONTRACT section 4), as JSON text: every report
 * in its read scope, each item starting with `organizationId` and `organizationName`.
 */
export async function listScopedReportsJson(
  deps: ScopedListDeps,
  scope: CrossScope,
  query: ListQuery,
): Promise<string> {
  const { page, pageSize } = listPageOf(query);
  const filter = scopedFilter(scope, query);
  const [totalCount, items] = await Promise.all([
    deps.scopedListing.count(filter),
    scopedPage(deps, filter, query),
  ]);
  const totalPages = Math.ceil(totalCount / pageSize);
  return `{"page":${page},"totalPages":${totalPages},"totalCount":${totalCount},"items":[${items.map((i) => listedItemJson(i, query)).join(",")}]}`;
}

/** Every report of the scoped listing, chunk by chunk (with `page`, that page only). */
export async function* exportScopedReports(
  deps: ScopedListDeps,
  scope: CrossScope,
  query: ListQuery & MarketFilter,
): AsyncGenerator<ScopedReportCsvItem[]> {
  const filter = scopedFilter(scope, query);
  if (query.page !== undefined) {
    const items = await scopedPage(deps, filter, query);
    yield items.map((item) => csvItemOf<ScopedReportCsvItem>(item, query));
    return;
  }
  yield* exportChunks((limit, cursor: ScopedListCursor | undefined) =>
    deps.scopedListing.after(filter, limit, cursor, query.include === "quality"),
  );
}

/** The one page query of the scoped listing (JSON and CSV alike). */
async function scopedPage(deps: ScopedListDeps, filter: ScopedListFilter, query: ListQuery) {
  const { pageSize, offset } = listPageOf(query);
  if (offset === undefined) return [];
  return deps.scopedListing.pageJson(filter, pageSize, offset);
}

const NO_COINS: CrossScope = { kind: "coins", baseCoinIds: [] };

/** The query's filters within the scope; an organization id nothing can hold lists nothing. */
function scopedFilter(scope: CrossScope, query: ListQuery & MarketFilter): ScopedListFilter {
  const dates = storableDateRange(query.dateGte, query.dateLte);
  const organizationId = query.organizationId;
  const unmatchable =
    organizationId !== undefined && !storableText(200).safeParse(organizationId).success;
  return {
    scope: unmatchable ? NO_COINS : scope,
    organizationId,
    baseCoinId: query.baseCoinId,
    exchangeId: query.exchangeId,
    quote: query.quote,
    instrumentType: query.instrumentType,
    dateGte: dates.from,
    dateLte: dates.to,
  };
}

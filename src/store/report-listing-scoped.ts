import { type Kysely, type RawBuilder, sql } from "kysely";
import type { ReadScope } from "../domain/caller.js";
import type { ScopedReportCsvItem } from "../schemas/report.js";
import type { MarketFilter, PageItem } from "./report-listing.js";
import { ITEM_JSON, marketConditions, selected } from "./report-listing.js";
import { type ListedRow, toCsvItem } from "./report-rows.js";
import type { Tables } from "./tables.js";

/**
 * The listing of a project or operator key (CONTRACT section 4): reports of many
 * organizations. A project reads its coins' reports dated inside an engagement of their
 * organization for that coin; the operator reads every report.
 */
export type ScopedListFilter = {
  scope: Exclude<ReadScope, { kind: "organization" }>;
  organizationId?: string;
  baseCoinId?: string;
  exchangeId?: string;
  dateGte?: string;
  dateLte?: string;
} & MarketFilter;

/** Where a scoped walk stopped: the key of the last report it returned. */
export type ScopedListCursor = Pick<
  ListedRow,
  "date" | "exchange_id" | "base_coin_id" | "quote_key" | "instrument_type"
> & { organization_id: string };

const ORDER = sql`r.date desc, r.exchange_id, r.base_coin_id, r.organization_id, r.quote_key, r.instrument_type`;

/**
 * The reports a scope reads. A project's: its coins' engagements joined to the reports of
 * that organization and coin dated inside them (the periods do not overlap, so a report joins
 * once); driven by the few engagements, each a range of the (organization, base coin, date)
 * index, instead of a scan of every report. The explicit collation lets that index (whose
 * columns compare byte-wise) serve the join. No index is added for these readers: one on
 * reports would slow every submission.
 */
function source(f: ScopedListFilter): RawBuilder<unknown> {
  if (f.scope.kind === "all") return sql`reports r`;
  return sql`engagements g join reports r
    on r.organization_id = g.organization_id collate "C"
    and r.base_coin_id = g.base_coin_id collate "C"
    and r.date >= g.since and (g.until is null or r.date <= g.until)`;
}

function where(f: ScopedListFilter): RawBuilder<unknown> {
  const conditions: RawBuilder<unknown>[] = [];
  if (f.scope.kind === "coins") {
    conditions.push(sql`g.base_coin_id = any(${[...f.scope.baseCoinIds]}::text[])`);
  }
  if (f.organizationId !== undefined) conditions.push(sql`r.organization_id = ${f.organizationId}`);
  if (f.baseCoinId !== undefined) conditions.push(sql`r.base_coin_id = ${f.baseCoinId}`);
  if (f.exchangeId !== undefined) conditions.push(sql`r.exchange_id = ${f.exchangeId}`);
  conditions.push(...marketConditions(f, "r."));
  if (f.dateGte !== undefined) conditions.push(sql`r.date >= ${f.dateGte}::date`);
  if (f.dateLte !== undefined) conditions.push(sql`r.date <= ${f.dateLte}::date`);
  return conditions.length === 0 ? sql`true` : sql.join(conditions, sql` and `);
}

/** Reports after `c` in scoped listing order (date descending, the rest ascending; see
 * report-listing.ts for why `r.date <=` stands beside the `or`). */
function after(c: ScopedListCursor): RawBuilder<unknown> {
  return sql`r.date <= ${c.date}::date and (r.date < ${c.date}::date or (r.date = ${c.date}::date and
    (r.exchange_id, r.base_coin_id, r.organization_id, r.quote_key, r.instrument_type) >
    (${c.exchange_id}, ${c.base_coin_id}, ${c.organization_id}, ${c.quote_key}, ${c.instrument_type})))`;
}

/** The item of `ITEM_JSON` with the organization's id and name first. */
const SCOPED_ITEM_JSON = sql`'{"organizationId":' || to_json(r.organization_id)::text
  || ',"organizationName":' || to_json(coalesce(o.name, r.organization_id))::text
  || ',' || substr(${ITEM_JSON}, 2)`;

const empty = (f: ScopedListFilter) => f.scope.kind === "coins" && f.scope.baseCoinIds.length === 0;

export function createScopedReportListing(db: Kysely<Tables>) {
  return {
    /** Exact, row by row (the month counts are per organization and ignore engagement dates). */
    async count(filter: ScopedListFilter): Promise<number> {
      if (empty(filter)) return 0;
      const r = await sql<{ n: number }>`
        select count(*)::int as n from ${source(filter)} where ${where(filter)}`.execute(db);
      return r.rows[0]?.n ?? 0;
    },

    /** One page in scoped listing order, each item as its JSON text (see pageJson). */
    async pageJson(filter: ScopedListFilter, limit: number, offset: number): Promise<PageItem[]> {
      if (empty(filter)) return [];
      const r = await sql<PageItem>`
        with page as (
          select r.id from ${source(filter)} where ${where(filter)}
          order by ${ORDER}
          limit ${limit} offset ${offset}
        )
        select ${SCOPED_ITEM_JSON} as item, r.instrument_type as "instrumentType",
          r.quality_flags as "qualityFlags"
        from page p join reports r on r.id = p.id
        left join organizations o on o.id = r.organization_id
        left join exchanges e on e.id = r.exchange_id
        left join coins c on c.id = r.base_coin_id
        order by ${ORDER}`.execute(db);
      return r.rows;
    },

    /** The next `limit` reports after `cursor`, for exports, and the cursor to go on from. */
    async after(
      filter: ScopedListFilter,
      limit: number,
      cursor: ScopedListCursor | undefined,
      withQualityFlags = false,
    ): Promise<{ items: ScopedReportCsvItem[]; next: ScopedListCursor | undefined }> {
      if (empty(filter)) return { items: [], next: undefined };
      const r = await sql<ListedRow & { organization_id: string; organization_name: string }>`
        select ${selected}, r.organization_id,
          coalesce(o.name, r.organization_id) as organization_name,
          coalesce(e.name, r.exchange_id) as exchange_name,
          coalesce(c.symbol, r.base_coin_id) as base_coin_symbol
        from ${source(filter)}
        left join organizations o on o.id = r.organization_id
        left join exchanges e on e.id = r.exchange_id
        left join coins c on c.id = r.base_coin_id
        where ${where(filter)} ${cursor === undefined ? sql`` : sql`and ${after(cursor)}`}
        order by ${ORDER}
        limit ${limit}`.execute(db);
      const last = r.rows.length < limit ? undefined : r.rows.at(-1);
      const items = r.rows.map((row) => ({
        organizationId: row.organization_id,
        organizationName: row.organization_name,
        ...toCsvItem(row, withQualityFlags),
      }));
      return { items, next: last };
    },
  };
}

export type ScopedReportListing = ReturnType<typeof createScopedReportListing>;

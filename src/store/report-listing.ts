import { type Kysely, type RawBuilder, sql } from "kysely";
import { addDays, addMonths, wholeMonthsWithin } from "../domain/dates.js";
import {
  type InstrumentType,
  METRICS,
  type Metric,
  V1_METRICS,
  V2_ONLY_METRICS,
} from "../domain/report.js";
import type { ReportCsvItem } from "../schemas/report.js";
import { monthCountSql } from "./month-counts.js";
import { type ListedRow, toCsvItem } from "./report-rows.js";
import { metricColumn } from "./report-store.js";
import type { Tables } from "./tables.js";

export type ListFilter = {
  organizationId: string;
  /** Only these base coins (the organization's active engagements). */
  baseCoinIds: string[];
  exchangeId?: string;
  dateGte?: string;
  dateLte?: string;
} & MarketFilter;

/** One market's reports only (the dashboard's market page): its quote key and instrument type. */
export type MarketFilter = { quote?: string; instrumentType?: InstrumentType };

/** The conditions of a MarketFilter on the reports `r` (or unqualified with `prefix` ""). */
export function marketConditions(f: MarketFilter, prefix = ""): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (f.quote !== undefined) conditions.push(sql`${sql.raw(prefix)}quote_key = ${f.quote}`);
  if (f.instrumentType !== undefined)
    conditions.push(sql`${sql.raw(prefix)}instrument_type = ${f.instrumentType}`);
  return conditions;
}

/**
 * A listing item's JSON text, with the record key's instrument type beside it: the JSON item
 * has none (spec 2.3), the CSV export carries it so that a file can be submitted again.
 */
export type PageItem = { item: string; instrumentType: InstrumentType; qualityFlags: number };

const ORDER = sql`date desc, exchange_id, base_coin_id, quote_key, instrument_type`;
export const selected = sql.raw(
  [
    "date",
    "exchange_id",
    "base_coin_id",
    "quote_key",
    "instrument_type",
    "quote_coin_id",
    "quote_coin_symbol",
    "type",
    "schema_version",
    "eligibility_status",
    "eligibility_reason",
    "quality_flags",
    ...METRICS.map(metricColumn),
  ]
    .map((c) => `r.${c}`)
    .join(", "),
);

function where(
  f: ListFilter,
  dates: { from?: string; to?: string } = { from: f.dateGte, to: f.dateLte },
) {
  const conditions = [
    sql`organization_id = ${f.organizationId}`,
    sql`base_coin_id = any(${f.baseCoinIds}::text[])`,
  ];
  if (f.exchangeId !== undefined) conditions.push(sql`exchange_id = ${f.exchangeId}`);
  conditions.push(...marketConditions(f));
  if (dates.from !== undefined) conditions.push(sql`date >= ${dates.from}::date`);
  if (dates.to !== undefined) conditions.push(sql`date <= ${dates.to}::date`);
  return sql.join(conditions, sql` and `);
}

/**
 * A listing item as JSON text, built by plain text concatenation (PostgreSQL's json functions
 * look up every value's output function row by row and cost more than Node did). Strings go
 * through to_json for escaping; float8 prints its shortest exact form, a valid JSON number.
 * Key order and presence follow `reportItemSchema`: the quote fields only when set, the
 * v2-only metrics as null for v1 reports. Names fall back to ids, as in `toCsvItem`.
 */
export const ITEM_JSON = (() => {
  const text = (column: string) => `to_json(${column})::text`;
  const nullable = (expression: string) => `coalesce(${expression}, 'null')`;
  const metric = (m: Metric) => `',"${m}":' || ${nullable(`r.${metricColumn(m)}::text`)}`;
  const optional = (key: string, column: string) =>
    `case when ${column} is null then '' else ',"${key}":' || ${text(column)} end`;
  return sql.raw(
    [
      `'{"date":"' || to_char(r.date, 'YYYY-MM-DD') || '"'`,
      `',"exchangeId":' || ${text("r.exchange_id")}`,
      `',"exchangeName":' || ${text("coalesce(e.name, r.exchange_id)")}`,
      `',"baseCoinId":' || ${text("r.base_coin_id")}`,
      `',"baseCoinSymbol":' || ${text("coalesce(c.symbol, r.base_coin_id)")}`,
      optional("quoteCoinId", "r.quote_coin_id"),
      optional("quoteCoinSymbol", "r.quote_coin_symbol"),
      ...V1_METRICS.map(metric),
      `',"type":' || ${nullable(text("r.type"))}`,
      ...V2_ONLY_METRICS.map(metric),
      `',"eligibilityStatus":' || ${text("r.eligibility_status")}`,
      `',"eligibilityReason":' || ${nullable(text("r.eligibility_reason"))} || '}'`,
    ].join(" || "),
  );
})();

/** Where a listing walk stopped: the key of the last report it returned. */
export type ListCursor = Pick<
  ListedRow,
  "date" | "exchange_id" | "base_coin_id" | "quote_key" | "instrument_type"
>;

/**
 * Reports after `c` in listing order (date descending, the rest ascending). The `or` alone is
 * no index range: without `date <=` beside it every chunk of an export scanned the index from
 * the newest report on, and an export took time growing with the square of its length.
 */
function after(c: ListCursor): RawBuilder<unknown> {
  return sql`date <= ${c.date}::date and (date < ${c.date}::date or (date = ${c.date}::date and
    (exchange_id, base_coin_id, quote_key, instrument_type) >
    (${c.exchange_id}, ${c.base_coin_id}, ${c.quote_key}, ${c.instrument_type})))`;
}

/** The next `limit` reports of `filter` after `cursor` (an export's next chunk). */
export function chunkAfter(
  filter: ListFilter,
  limit: number,
  cursor: ListCursor | undefined,
): RawBuilder<ListedRow> {
  return sql<ListedRow>`
    select ${selected}, coalesce(e.name, r.exchange_id) as exchange_name,
      coalesce(c.symbol, r.base_coin_id) as base_coin_symbol
    from reports r
    left join exchanges e on e.id = r.exchange_id
    left join coins c on c.id = r.base_coin_id
    where ${where(filter)} ${cursor === undefined ? sql`` : sql`and ${after(cursor)}`}
    order by ${ORDER}
    limit ${limit}`;
}

/**
 * The count, answered from the month counts (month-counts.ts) for the whole months in the
 * date range and row by row (over an index) only for the partial months at its edges. With an
 * exchange filter the matching rows are few (one exchange of many) and are counted directly.
 */
function countQuery(f: ListFilter): RawBuilder<{ n: number }> {
  const exact = (dates: { from?: string; to?: string }) =>
    sql`(select count(*) from reports where ${where(f, dates)})`;
  const byMonth = f.exchangeId === undefined && marketConditions(f).length === 0;
  const months = byMonth ? wholeMonthsWithin(f.dateGte, f.dateLte) : undefined;
  if (months === undefined)
    return sql`select ${exact({ from: f.dateGte, to: f.dateLte })}::int as n`;
  const parts = [
    monthCountSql({
      organizationId: f.organizationId,
      baseCoinIds: f.baseCoinIds,
      firstMonth: months.first,
      lastMonth: months.last,
    }),
  ];
  if (f.dateGte !== undefined && months.first !== undefined && f.dateGte < months.first) {
    parts.push(exact({ from: f.dateGte, to: addDays(months.first, -1) }));
  }
  if (f.dateLte !== undefined && months.last !== undefined) {
    const afterLast = addMonths(months.last, 1);
    if (f.dateLte >= afterLast) parts.push(exact({ from: afterLast, to: f.dateLte }));
  }
  return sql`select (${sql.join(parts, sql` + `)})::int as n`;
}

export function createReportListing(db: Kysely<Tables>) {
  return {
    async count(filter: ListFilter): Promise<number> {
      if (filter.baseCoinIds.length === 0) return 0;
      const r = await countQuery(filter).execute(db);
      return r.rows[0]?.n ?? 0;
    },

    /**
     * One page in listing order, each report already written as its listing item's JSON text
     * (the shape of `reportItemSchema`). Parsing 30 columns per row into numbers and printing
     * them back as JSON cost most of a page's time in Node; PostgreSQL prints them anyway.
     * The offset is walked over the key index alone (the inner select reads only indexed
     * columns and the included id), and only the page's rows are then fetched: a deep page
     * costs an index walk, not a heap read per skipped row.
     */
    async pageJson(filter: ListFilter, limit: number, offset: number): Promise<PageItem[]> {
      if (filter.baseCoinIds.length === 0) return [];
      const r = await sql<PageItem>`
        with page as (
          select id, date, exchange_id, base_coin_id, quote_key, instrument_type
          from reports where ${where(filter)}
          order by ${ORDER}
          limit ${limit} offset ${offset}
        )
        select ${ITEM_JSON} as item, r.instrument_type as "instrumentType",
          r.quality_flags as "qualityFlags"
        from page p join reports r on r.id = p.id
        left join exchanges e on e.id = r.exchange_id
        left join coins c on c.id = r.base_coin_id
        order by p.date desc, p.exchange_id, p.base_coin_id, p.quote_key, p.instrument_type`.execute(
        db,
      );
      return r.rows;
    },

    /**
     * The next `limit` reports after `cursor` (from the start without one), for exports, and
     * the cursor to go on from (undefined after the last one).
     */
    async after(
      filter: ListFilter,
      limit: number,
      cursor: ListCursor | undefined,
      withQualityFlags = false,
    ): Promise<{ items: ReportCsvItem[]; next: ListCursor | undefined }> {
      if (filter.baseCoinIds.length === 0) return { items: [], next: undefined };
      const r = await chunkAfter(filter, limit, cursor).execute(db);
      const last = r.rows.length < limit ? undefined : r.rows.at(-1);
      return { items: r.rows.map((row) => toCsvItem(row, withQualityFlags)), next: last };
    },
  };
}

export type ReportListing = ReturnType<typeof createReportListing>;

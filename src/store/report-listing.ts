import { type Kysely, type RawBuilder, sql } from "kysely";
import { METRICS } from "../domain/report.js";
import { metricColumn } from "./report-store.js";
import type { ReportRow, Tables } from "./tables.js";

export type ListFilter = {
  organizationId: string;
  /** Only these base coins (the organization's active engagements). */
  baseCoinIds: string[];
  exchangeId?: string;
  dateGte?: string;
  dateLte?: string;
};

export type StoredReport = Omit<ReportRow, "id" | "created_at" | "updated_at">;

const ORDER = sql`date desc, exchange_id, base_coin_id, quote_key, instrument_type`;
const selected = sql.raw(
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
    ...METRICS.map(metricColumn),
  ]
    .map((c) => `r.${c}`)
    .join(", "),
);

function where(f: ListFilter): RawBuilder<unknown> {
  const conditions = [
    sql`organization_id = ${f.organizationId}`,
    sql`base_coin_id = any(${f.baseCoinIds}::text[])`,
  ];
  if (f.exchangeId !== undefined) conditions.push(sql`exchange_id = ${f.exchangeId}`);
  if (f.dateGte !== undefined) conditions.push(sql`date >= ${f.dateGte}::date`);
  if (f.dateLte !== undefined) conditions.push(sql`date <= ${f.dateLte}::date`);
  return sql.join(conditions, sql` and `);
}

export function createReportListing(db: Kysely<Tables>) {
  return {
    async count(filter: ListFilter): Promise<number> {
      if (filter.baseCoinIds.length === 0) return 0;
      const r = await sql<{
        n: number;
      }>`select count(*)::int as n from reports where ${where(filter)}`.execute(db);
      return r.rows[0]?.n ?? 0;
    },

    /**
     * One page in listing order. The offset is walked over the key index alone (the inner
     * select reads only indexed columns and the included id), and only the page's rows are
     * then fetched: a deep page costs an index walk, not a heap read per skipped row.
     */
    async page(filter: ListFilter, limit: number, offset: number): Promise<StoredReport[]> {
      if (filter.baseCoinIds.length === 0) return [];
      const r = await sql<StoredReport>`
        with page as (
          select id, date, exchange_id, base_coin_id, quote_key, instrument_type
          from reports where ${where(filter)}
          order by ${ORDER}
          limit ${limit} offset ${offset}
        )
        select ${selected} from page p join reports r on r.id = p.id
        order by p.date desc, p.exchange_id, p.base_coin_id, p.quote_key, p.instrument_type`.execute(
        db,
      );
      return r.rows;
    },
  };
}

export type ReportListing = ReturnType<typeof createReportListing>;

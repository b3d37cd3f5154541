import { type Kysely, type RawBuilder, sql } from "kysely";
import {
  eligibilityStatusOf,
  METRICS,
  type Metric,
  type Report,
  type SchemaVersion,
} from "../domain/report.js";
import { withTransientRetry } from "./retry.js";
import type { Tables } from "./tables.js";

/** `bidDepth50` -> `bid_depth_50`: the column of each metric. */
export const metricColumn = (metric: Metric): string =>
  metric
    .replace(/([A-Z])/g, "_$1")
    .replace(/(\d+)/g, "_$1")
    .toLowerCase()
    .replace(/__/g, "_");

const metricColumns = METRICS.map(metricColumn);
const keyColumns = ["date", "exchange_id", "base_coin_id", "quote_key", "instrument_type"];
const valueColumns = [
  "quote_coin_id",
  "quote_coin_symbol",
  "type",
  "schema_version",
  ...metricColumns,
];

export type SubmissionLog = {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  schemaVersion: SchemaVersion;
};

export type UpsertCounts = { createdCount: number; updatedCount: number };

const ident = (name: string) => sql.ref(name);
const list = (names: string[], prefix = "") => sql.join(names.map((n) => sql.raw(`${prefix}${n}`)));

export function createReportStore(db: Kysely<Tables>) {
  return {
    /**
     * Stores a batch in ONE statement: an `unnest` upsert on the record key that tells created
     * from updated rows (xmax = 0 only on a freshly inserted tuple), the append of every
     * accepted version to report_versions, the per-month counts the listing sums, and the
     * submission log line. One statement is one transaction, so a batch is stored whole or
     * not at all. Rows are written in key order (the caller sorts) so that concurrent batches
     * lock overlapping keys in one order.
     *
     * Eligibility was computed from reference data of version `referenceVersion`. The
     * statement share-locks the version row: a market-data load that bumped it first makes
     * the statement write nothing (it sees the new version: READ COMMITTED re-reads a locked
     * row) and return undefined, so the caller re-validates; a load that comes later waits for
     * this commit, and its eligibility recomputation then sees these rows.
     */
    async upsert(
      log: SubmissionLog,
      reports: Report[],
      referenceVersion: number,
    ): Promise<UpsertCounts | undefined> {
      const input = unnestReports(reports);
      const query = sql<{ created: number; total: number; current: boolean }>`
        with guard as (
          select version from reference_data_version for share
        ),
        input as (
          select * from ${input} where (select version from guard) = ${referenceVersion}
        ),
        upserted as (
          insert into reports as r (organization_id, ${list(keyColumns)}, ${list(valueColumns)},
            eligibility_status, eligibility_reason)
          select ${log.organizationId}, ${list(keyColumns)}, quote_coin_id, quote_coin_symbol, type,
            ${log.schemaVersion}::smallint, ${list(metricColumns)}, eligibility_status, eligibility_reason
          from input
          on conflict (organization_id, ${list(keyColumns)}) do update set
            ${sql.join(
              [...valueColumns, "eligibility_status", "eligibility_reason"].map(
                (c) => sql`${ident(c)} = excluded.${ident(c)}`,
              ),
            )},
            updated_at = now()
          returning r.id, (r.xmax = 0) as created, r.base_coin_id, r.date, ${list(valueColumns, "r.")}
        ),
        versions as (
          insert into report_versions (report_id, submission_id, ${list(valueColumns)})
          select id, ${log.id}::uuid, ${list(valueColumns)} from upserted
        ),
        counted as (
          insert into report_month_counts as c (organization_id, base_coin_id, month, n)
          select ${log.organizationId}, base_coin_id, date_trunc('month', date)::date, count(*)
          from upserted where created
          group by base_coin_id, date_trunc('month', date)
          order by base_coin_id, date_trunc('month', date)
          on conflict (organization_id, base_coin_id, month) do update set n = c.n + excluded.n
        ),
        submission as (
          insert into submissions (id, organization_id, api_key_id, schema_version, dry_run,
            record_count, created_count, updated_count)
          select ${log.id}::uuid, ${log.organizationId}, ${log.apiKeyId}::uuid, ${log.schemaVersion},
            false, count(*), count(*) filter (where created), count(*) filter (where not created)
          from upserted having count(*) > 0
        )
        select (count(*) filter (where created))::int as created, count(*)::int as total,
          (select version from guard) = ${referenceVersion} as current
        from upserted`;
      const result = await withTransientRetry(() => query.execute(db));
      const row = result.rows[0];
      if (row === undefined || !row.current) return undefined;
      return { createdCount: row.created, updatedCount: row.total - row.created };
    },

    /** What `upsert` would count, without writing a report: for dry runs. */
    async countExisting(organizationId: string, reports: Report[]): Promise<number> {
      const keys = sql`unnest(
        ${reports.map((r) => r.date)}::date[], ${reports.map((r) => r.exchangeId)}::text[],
        ${reports.map((r) => r.baseCoinId)}::text[], ${reports.map((r) => r.quoteKey)}::text[],
        ${reports.map((r) => r.instrumentType)}::text[]) as k(${list(keyColumns)})`;
      const result = await sql<{ n: number }>`
        select count(*)::int as n from ${keys}
        join reports r on r.organization_id = ${organizationId}
          and ${sql.join(
            keyColumns.map((c) => sql`r.${ident(c)} = k.${ident(c)}`),
            sql` and `,
          )}`.execute(db);
      return result.rows[0]?.n ?? 0;
    },

    async logDryRun(log: SubmissionLog, recordCount: number, counts: UpsertCounts): Promise<void> {
      await db
        .insertInto("submissions")
        .values({
          id: log.id,
          organization_id: log.organizationId,
          api_key_id: log.apiKeyId,
          schema_version: log.schemaVersion,
          dry_run: true,
          record_count: recordCount,
          created_count: counts.createdCount,
          updated_count: counts.updatedCount,
        })
        .execute();
    },
  };
}

export type ReportStore = ReturnType<typeof createReportStore>;

/** The batch as one `unnest` of typed arrays, a column per array. */
function unnestReports(reports: Report[]): RawBuilder<unknown> {
  const column = <T>(pick: (r: Report) => T) => reports.map(pick);
  const arrays = [
    sql`${column((r) => r.date)}::date[]`,
    sql`${column((r) => r.exchangeId)}::text[]`,
    sql`${column((r) => r.baseCoinId)}::text[]`,
    sql`${column((r) => r.quoteKey)}::text[]`,
    sql`${column((r) => r.instrumentType)}::text[]`,
    sql`${column((r) => r.quoteCoinId)}::text[]`,
    sql`${column((r) => r.quoteCoinSymbol)}::text[]`,
    sql`${column((r) => r.type)}::text[]`,
    ...METRICS.map((m) => sql`${column((r) => r.metrics[m])}::float8[]`),
    sql`${column((r) => eligibilityStatusOf(r.eligibilityReason))}::text[]`,
    sql`${column((r) => r.eligibilityReason)}::text[]`,
  ];
  const names = [
    ...keyColumns,
    "quote_coin_id",
    "quote_coin_symbol",
    "type",
    ...metricColumns,
    "eligibility_status",
    "eligibility_reason",
  ];
  return sql`unnest(${sql.join(arrays)}) as t(${list(names)})`;
}

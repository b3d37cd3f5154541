import { CompiledQuery, type Kysely, sql } from "kysely";
import { DEFAULT_PUBLIC_DEPTH_TOLERANCE, plausibilityMask } from "../domain/quality.js";
import {
  eligibilityStatusOf,
  METRICS,
  type Metric,
  type Report,
  type SchemaVersion,
} from "../domain/report.js";
import { monthCountDeltaSql } from "./month-counts.js";
import { float8ArrayOf, textArrayOf } from "./pg-arrays.js";
import { prepared } from "./prepared-statements.js";
import { exceedsPublicDepthSql } from "./quality-sql.js";
import * as completing from "./report-upsert-completion.js";
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
/** A record's key within its organization (spec section 3), as columns. */
export const RECORD_KEY_COLUMNS = [
  "date",
  "exchange_id",
  "base_coin_id",
  "quote_key",
  "instrument_type",
];
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
  /**
   * When the service accepted the submission, by its clock: a new report's first accepted
   * time (which decides lateness), the time of every version it writes.
   */
  receivedAt: Date;
  /** The request's Idempotency-Key header, when it is 1 to 255 printable ASCII characters. */
  idempotencyKey?: string | null;
};

export type UpsertCounts = { createdCount: number; updatedCount: number };

const ident = (name: string) => sql.ref(name);
const list = (names: string[], prefix = "") => sql.join(names.map((n) => sql.raw(`${prefix}${n}`)));

export function createReportStore(
  db: Kysely<Tables>,
  publicDepthTolerance = DEFAULT_PUBLIC_DEPTH_TOLERANCE,
) {
  const parametersOf = (log: SubmissionLog, reports: Report[], referenceVersion: number) => [
    log.organizationId,
    log.schemaVersion,
    referenceVersion,
    log.id,
    log.apiKeyId,
    log.receivedAt,
    log.idempotencyKey ?? null,
    publicDepthTolerance,
    ...inputArrays(reports),
  ];
  return {
    /**
     * Stores a batch in ONE statement: an `unnest` upsert on the record key that tells created
     * from updated rows (xmax = 0 only on a freshly inserted tuple), the append of every
     * accepted version to report_versions, the batch's delta of the listing's month counts,
     * and the submission log line. One statement is one transaction, so a batch is stored
     * whole or not at all. Rows are written in key order (the caller sorts) so that concurrent batches
     * lock overlapping keys in one order.
     *
     * Eligibility was computed from reference data of version `referenceVersion`. A load that
     * bumps the version holds a SHARE ROW EXCLUSIVE lock on reports until it commits (see
     * reference-store). This statement's ROW EXCLUSIVE lock is taken before its snapshot, so
     * either the load waits for this commit (and its eligibility recomputation sees these rows)
     * or this statement waits for the load and then sees the new version: it writes nothing
     * and returns undefined, and the caller re-validates.
     *
     * The SQL text is built once; a batch only supplies its parameters.
     */
    async upsert(
      log: SubmissionLog,
      reports: Report[],
      referenceVersion: number,
    ): Promise<UpsertCounts | undefined> {
      const parameters = parametersOf(log, reports, referenceVersion);
      const query = CompiledQuery.raw(UPSERT_SQL, parameters);
      const run = () =>
        db.executeQuery<{ created: number; total: number; current: boolean }>(query);
      // Inside a transaction a conflict aborts the whole of it: its owner runs it again.
      const result = await (db.isTransaction ? run() : withTransientRetry(run));
      const row = result.rows[0];
      if (row === undefined || !row.current) return undefined;
      return { createdCount: row.created, updatedCount: row.total - row.created };
    },

    /** `upsert` and the Idempotency-Key's answer in one statement (report-upsert-completion.ts). */
    upsertCompleting: (c: completing.UpsertCompletion, ...batch: Parameters<typeof parametersOf>) =>
      completing.upsertCompleting(db, COMPLETING_UPSERT_SQL, c, parametersOf(...batch)),

    /** What `upsert` would count, without writing a report: for dry runs. */
    async countExisting(organizationId: string, reports: Report[]): Promise<number> {
      const keys = sql`unnest(
        ${reports.map((r) => r.date)}::date[], ${reports.map((r) => r.exchangeId)}::text[],
        ${reports.map((r) => r.baseCoinId)}::text[], ${reports.map((r) => r.quoteKey)}::text[],
        ${reports.map((r) => r.instrumentType)}::text[]) as k(${list(RECORD_KEY_COLUMNS)})`;
      const result = await sql<{ n: number }>`
        select count(*)::int as n from ${keys}
        join reports r on r.organization_id = ${organizationId}
          and ${sql.join(
            RECORD_KEY_COLUMNS.map((c) => sql`r.${ident(c)} = k.${ident(c)}`),
            sql` and `,
          )}`.execute(db);
      return result.rows[0]?.n ?? 0;
    },

    /** How many reports the organization has stored. */
    async countOf(organizationId: string): Promise<number> {
      const r = await db
        .selectFrom("reports")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("organization_id", "=", organizationId)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
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
          submitted_at: log.receivedAt,
          idempotency_key: log.idempotencyKey ?? null,
        })
        .execute();
    },
  };
}

export type ReportStore = ReturnType<typeof createReportStore>;

/** The batch's columns, in the order `unnest` takes them: one array per column. */
const inputColumns: {
  name: string;
  type: "date" | "text" | "float8" | "smallint";
  of(r: Report): unknown;
}[] = [
  { name: "date", type: "date", of: (r) => r.date },
  { name: "exchange_id", type: "text", of: (r) => r.exchangeId },
  { name: "base_coin_id", type: "text", of: (r) => r.baseCoinId },
  { name: "quote_key", type: "text", of: (r) => r.quoteKey },
  { name: "instrument_type", type: "text", of: (r) => r.instrumentType },
  { name: "quote_coin_id", type: "text", of: (r) => r.quoteCoinId },
  { name: "quote_coin_symbol", type: "text", of: (r) => r.quoteCoinSymbol },
  { name: "type", type: "text", of: (r) => r.type },
  ...METRICS.map((m) => ({
    name: metricColumn(m),
    type: "float8" as const,
    of: (r: Report) => r.metrics[m] ?? null,
  })),
  { name: "eligibility_status", type: "text", of: (r) => eligibilityStatusOf(r.eligibilityReason) },
  { name: "eligibility_reason", type: "text", of: (r) => r.eligibilityReason },
  // Computed here, per record, from the record alone; the public-depth flag needs the day's
  // snapshot and is added in SQL.
  {
    name: "plausibility_flags",
    type: "smallint",
    of: (r) => String(plausibilityMask(r.metrics, r.omittedMetrics)),
  },
];

function inputArrays(reports: Report[]): (string | Buffer)[] {
  return inputColumns.map(({ type, of }) =>
    type === "float8"
      ? float8ArrayOf(reports, of as (r: Report) => number | null)
      : textArrayOf(reports, of as (r: Report) => string | null),
  );
}

// $1 organization, $2 schema version, $3 reference-data version, $4 submission id, $5 API key
// id, $6 time received, $7 Idempotency-Key, $8 PUBLIC_DEPTH_TOLERANCE, then an array a column.
const FIXED_PARAMETERS = 8;
const unnestInput = `unnest(${inputColumns
  .map((c, i) => `$${FIXED_PARAMETERS + 1 + i}::${c.type}[]`)
  .join(", ")}) as t(${inputColumns.map((c) => c.name).join(", ")})`;
const keys = RECORD_KEY_COLUMNS.join(", ");
const values = valueColumns.join(", ");
const stored = [...valueColumns, "eligibility_status", "eligibility_reason", "quality_flags"];

const upsertSql = (completion?: completing.CompletionSql) => `
  with guard as (
    select version from reference_data_version
  ),${completion?.claim ?? ""}
  input as (
    select t.*,
      (t.plausibility_flags | ${exceedsPublicDepthSql("t", "$8::float8")})::smallint as quality_flags
    from ${unnestInput} where (select version from guard) = $3::bigint${completion?.inputGate ?? ""}
  ),
  upserted as (
    insert into reports as r (organization_id, ${keys}, ${values}, eligibility_status, eligibility_reason,
      quality_flags, created_at, updated_at)
    select $1::text, ${keys}, quote_coin_id, quote_coin_symbol, type, $2::smallint,
      ${metricColumns.join(", ")}, eligibility_status, eligibility_reason, quality_flags,
      $6::timestamptz, $6::timestamptz
    from input
    on conflict (organization_id, ${keys}) do update set
      ${stored.map((c) => `${c} = excluded.${c}`).join(", ")}, updated_at = $6::timestamptz
    returning r.id, (r.xmax = 0) as created, r.base_coin_id, r.date,
      ${valueColumns.map((c) => `r.${c}`).join(", ")}, r.quality_flags
  ),
  versions as (
    insert into report_versions (report_id, submission_id, recorded_at, ${values}, quality_flags)
    select id, $4::uuid, $6::timestamptz, ${values}, quality_flags from upserted
  ),
${monthCountDeltaSql}
  submission as (
    insert into submissions (id, organization_id, api_key_id, schema_version, dry_run,
      record_count, created_count, updated_count, submitted_at, idempotency_key)
    select $4::uuid, $1::text, $5::uuid, $2::smallint, false,
      count(*), count(*) filter (where created), count(*) filter (where not created),
      $6::timestamptz, $7::text
    from upserted having count(*) > 0
  )${completion?.keep ?? ""}
  select (count(*) filter (where created))::int as created, count(*)::int as total,
    (select version from guard) = $3::bigint as current${completion?.result ?? ""}
  from upserted`;
const UPSERT_SQL = prepared(upsertSql());
const COMPLETION = completing.completionSql(FIXED_PARAMETERS + inputColumns.length);
const COMPLETING_UPSERT_SQL = prepared(upsertSql(COMPLETION));

import { randomUUID } from "node:crypto";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { METRICS, type Report } from "../src/domain/report.js";
import { metricColumn, RECORD_KEY_COLUMNS } from "../src/store/report-store.js";

/**
 * A storage path the service does not take, measured by `bench:ingest-parts` (issue 19, goal
 * 1): a batch of NEW keys written by binary `COPY` instead of the `unnest` upsert. In one
 * transaction: the report ids drawn from their sequence, `COPY reports`, `COPY report_versions`
 * (or not), then the month-count delta and the submission row in one statement. `COPY` cannot
 * upsert: a batch holding one stored key would fail whole and have to be sent again as the
 * upsert, so the service could only use it for batches it knows are new. What it would save
 * per record is the question; its quality flags are taken as none (the benchmark stores no
 * public depth), as the service's statement computes them.
 */
export async function copyNewKeys(
  pool: pg.Pool,
  organizationId: string,
  batches: Report[][],
  concurrency: number,
  withVersions: boolean,
): Promise<{ elapsedMs: number }> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const client = await pool.connect();
      try {
        for (let i = next++; i < batches.length; i = next++) {
          await storeBatch(client, organizationId, batches[i] ?? [], withVersions);
        }
      } finally {
        client.release();
      }
    }),
  );
  return { elapsedMs: performance.now() - started };
}

const metricColumns = METRICS.map(metricColumn);
// In the order storeBatch encodes them.
const REPORT_COLUMNS = [
  "id",
  "organization_id",
  ...RECORD_KEY_COLUMNS,
  "quote_coin_id",
  "quote_coin_symbol",
  "type",
  "schema_version",
  ...metricColumns,
  "eligibility_status",
  "eligibility_reason",
  "quality_flags",
  "created_at",
  "updated_at",
];
const VERSION_COLUMNS = [
  "report_id",
  "submission_id",
  "recorded_at",
  "schema_version",
  "quote_coin_id",
  "quote_coin_symbol",
  "type",
  ...metricColumns,
  "quality_flags",
];

async function storeBatch(
  client: pg.PoolClient,
  organizationId: string,
  batch: Report[],
  withVersions: boolean,
): Promise<void> {
  const now = new Date();
  const submission = randomUUID();
  await client.query("begin");
  try {
    const drawn = await client.query<string[]>({
      text: "select nextval(pg_get_serial_sequence('reports', 'id'))::text from generate_series(1, $1)",
      values: [batch.length],
      rowMode: "array",
    });
    const ids = drawn.rows.map((row) => BigInt(row[0] ?? "0"));
    const reports = new BinaryCopy();
    batch.forEach((r, j) => {
      reports.row(REPORT_COLUMNS.length);
      reports.int8(ids[j] ?? 0n);
      reports.text(organizationId);
      reports.date(r.date);
      for (const text of [r.exchangeId, r.baseCoinId, r.quoteKey, r.instrumentType])
        reports.text(text);
      for (const text of [r.quoteCoinId, r.quoteCoinSymbol, r.type]) reports.text(text);
      reports.smallint(r.schemaVersion);
      for (const m of METRICS) reports.float8(r.metrics[m]);
      reports.text(r.eligibilityReason === null ? "eligible" : "ineligible_market_data_missing");
      reports.text(r.eligibilityReason);
      reports.smallint(0);
      reports.timestamptz(now);
      reports.timestamptz(now);
    });
    await copyIn(client, "reports", REPORT_COLUMNS, reports.end());
    if (withVersions) {
      const versions = new BinaryCopy();
      batch.forEach((r, j) => {
        versions.row(VERSION_COLUMNS.length);
        versions.int8(ids[j] ?? 0n);
        versions.uuid(submission);
        versions.timestamptz(now);
        versions.smallint(r.schemaVersion);
        for (const text of [r.quoteCoinId, r.quoteCoinSymbol, r.type]) versions.text(text);
        for (const m of METRICS) versions.float8(r.metrics[m]);
        versions.smallint(0);
      });
      await copyIn(client, "report_versions", VERSION_COLUMNS, versions.end());
    }
    await client.query(
      `with counted as (
        insert into report_month_count_deltas (organization_id, base_coin_ids, months, ns)
        select $1::text, array_agg(coin), array_agg(month), array_agg(n) from (
          select coin, date_trunc('month', day)::date as month, count(*)::int as n
          from unnest($2::text[], $3::date[]) as x(coin, day) group by 1, 2) by_month)
      insert into submissions (id, organization_id, api_key_id, schema_version, dry_run,
        record_count, created_count, updated_count, submitted_at, idempotency_key)
      values ($4::uuid, $1, null, 2, false, $5, $5, 0, $6, null)`,
      [
        organizationId,
        batch.map((r) => r.baseCoinId),
        batch.map((r) => r.date),
        submission,
        batch.length,
        now,
      ],
    );
    await client.query("commit");
  } catch (error) {
    await client.query("rollback");
    throw error;
  }
}

function copyIn(client: pg.PoolClient, table: string, columns: string[], data: Buffer) {
  return new Promise<void>((resolve, reject) => {
    const stream = client.query(
      copyFrom(`copy ${table} (${columns.join(", ")}) from stdin (format binary)`),
    );
    stream.on("error", reject);
    stream.on("finish", resolve);
    stream.end(data);
  });
}

const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const DAY_MS = 86_400_000;

/** Rows in PostgreSQL's binary COPY format: a header, each field as its length and bytes. */
class BinaryCopy {
  private buffer = Buffer.alloc(1 << 20);
  private at = 0;

  constructor() {
    this.ensure(19);
    this.at += this.buffer.write("PGCOPY\n\xff\r\n\0", this.at, "latin1");
    this.int32(0); // flags
    this.int32(0); // header extension length
  }

  row(fields: number) {
    this.ensure(2);
    this.at = this.buffer.writeInt16BE(fields, this.at);
  }

  text(value: string | null) {
    if (value === null) return this.int32(-1);
    const length = Buffer.byteLength(value);
    this.ensure(4 + length);
    this.at = this.buffer.writeInt32BE(length, this.at);
    this.at += this.buffer.write(value, this.at);
  }

  float8(value: number | null | undefined) {
    if (value === null || value === undefined) return this.int32(-1);
    this.int32(8);
    this.at = this.buffer.writeDoubleBE(value, this.at);
  }

  int8(value: bigint) {
    this.int32(8);
    this.at = this.buffer.writeBigInt64BE(value, this.at);
  }

  smallint(value: number) {
    this.int32(2);
    this.at = this.buffer.writeInt16BE(value, this.at);
  }

  date(iso: string) {
    this.int32(4);
    this.int32(Math.round((Date.parse(iso) - PG_EPOCH_MS) / DAY_MS));
  }

  timestamptz(at: Date) {
    this.int32(8);
    this.at = this.buffer.writeBigInt64BE(BigInt(at.getTime() - PG_EPOCH_MS) * 1000n, this.at);
  }

  uuid(value: string) {
    this.int32(16);
    this.ensure(16);
    this.at += Buffer.from(value.replace(/-/g, ""), "hex").copy(this.buffer, this.at);
  }

  end(): Buffer {
    this.ensure(2);
    this.at = this.buffer.writeInt16BE(-1, this.at);
    return this.buffer.subarray(0, this.at);
  }

  private int32(value: number) {
    this.ensure(4);
    this.at = this.buffer.writeInt32BE(value, this.at);
  }

  private ensure(bytes: number) {
    if (this.at + bytes + 12 <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.at + bytes + 12));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}

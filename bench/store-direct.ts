import { randomUUID } from "node:crypto";
import { CompiledQuery, type Kysely, sql } from "kysely";
import { METRICS, type Report } from "../src/domain/report.js";
import { float8ArrayBinary, textArrayLiteral } from "../src/store/pg-arrays.js";
import { createReferenceStore } from "../src/store/reference-store.js";
import { createReportStore, metricColumn, RECORD_KEY_COLUMNS } from "../src/store/report-store.js";
import type { Tables } from "../src/store/tables.js";

/** The records of a batch as stored reports, without any validation (the store's own limit). */
export function asReports(records: Record<string, unknown>[]): Report[] {
  return records.map((r) => ({
    date: r.date as string,
    exchangeId: r.exchangeId as string,
    baseCoinId: r.baseCoinId as string,
    quoteKey: r.quoteCoinId as string,
    instrumentType: "spot",
    quoteCoinId: r.quoteCoinId as string,
    quoteCoinSymbol: null,
    type: "project",
    schemaVersion: 2,
    metrics: Object.fromEntries(METRICS.map((m) => [m, r[m] as number])) as Report["metrics"],
    eligibilityReason: null,
  }));
}

type Timed = { latencies: number[]; elapsedMs: number };

async function runConcurrently(
  batches: Report[][],
  concurrency: number,
  write: (batch: Report[]) => Promise<void>,
): Promise<Timed> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < batches.length; i = next++) {
        const batch = batches[i];
        if (batch === undefined) break;
        const t0 = performance.now();
        await write(batch);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - started };
}

/** The service's own store path: one unnest upsert + history append per batch. */
export async function storeUpsert(
  db: Kysely<Tables>,
  organizationId: string,
  batches: Report[][],
  concurrency: number,
) {
  const store = createReportStore(db);
  const version = await createReferenceStore(db).version();
  return runConcurrently(batches, concurrency, async (batch) => {
    const stored = await store.upsert(
      {
        id: randomUUID(),
        organizationId,
        apiKeyId: null,
        schemaVersion: 2,
        receivedAt: new Date(),
      },
      batch,
      version,
    );
    if (stored === undefined) throw new Error("reference data changed during the benchmark");
  });
}

const columns = [
  "date",
  "exchange_id",
  "base_coin_id",
  "quote_key",
  "instrument_type",
  "quote_coin_id",
  "type",
  "schema_version",
  ...METRICS.map(metricColumn),
  "eligibility_status",
];

/** The conventional approach: one INSERT ... ON CONFLICT per record, in a transaction per batch. */
export function perRecordUpsert(
  db: Kysely<Tables>,
  organizationId: string,
  batches: Report[][],
  concurrency: number,
) {
  return runConcurrently(batches, concurrency, async (batch) => {
    await db.transaction().execute(async (trx) => {
      for (const r of batch) {
        const values = [
          r.date,
          r.exchangeId,
          r.baseCoinId,
          r.quoteKey,
          r.instrumentType,
          r.quoteCoinId,
          r.type,
          2,
          ...METRICS.map((m) => r.metrics[m]),
          "eligible",
        ];
        await sql`insert into reports (organization_id, ${sql.raw(columns.join(", "))})
          values (${organizationId}, ${sql.join(values)})
          on conflict (organization_id, date, exchange_id, base_coin_id, quote_key, instrument_type)
          do update set ${sql.raw(
            METRICS.map(metricColumn)
              .map((c) => `${c} = excluded.${c}`)
              .join(", "),
          )},
            updated_at = now()`.execute(trx);
      }
    });
  });
}

const PLAIN_TABLE = "bench_plain_reports";
const plainKey = ["organization_id", ...RECORD_KEY_COLUMNS];
const plainValues = ["quote_coin_id", "type", "schema_version", ...METRICS.map(metricColumn)];

/**
 * The database's limit for this shape of data: a table like `reports` (the unique record key
 * plus one listing index, no history, no month counts, no submission log) written with one
 * `unnest` upsert per batch. The service's ingest is measured against it (issue 19).
 */
export async function plainUnnestUpsert(
  db: Kysely<Tables>,
  organizationId: string,
  batches: Report[][],
  concurrency: number,
) {
  const metricDefinitions = METRICS.map((m) => `${metricColumn(m)} double precision`).join(", ");
  await sql
    .raw(`create table if not exists ${PLAIN_TABLE} (
      organization_id text collate "C" not null, date date not null,
      exchange_id text collate "C" not null, base_coin_id text collate "C" not null,
      quote_key text collate "C" not null, instrument_type text collate "C" not null,
      quote_coin_id text, type text, schema_version smallint not null, ${metricDefinitions},
      updated_at timestamptz not null default now())`)
    .execute(db);
  // One statement per query: PGlite's extended protocol takes no more.
  await sql
    .raw(`create unique index if not exists ${PLAIN_TABLE}_key on ${PLAIN_TABLE}
      (organization_id, date desc, exchange_id, base_coin_id, quote_key, instrument_type)`)
    .execute(db);
  await sql
    .raw(`create index if not exists ${PLAIN_TABLE}_coin on ${PLAIN_TABLE}
      (organization_id, base_coin_id, date desc, exchange_id, quote_key, instrument_type)`)
    .execute(db);
  const text = (values: string[]) => textArrayLiteral(values);
  const statement = `insert into ${PLAIN_TABLE} (${plainKey.join(", ")}, ${plainValues.join(", ")})
    select $1::text, * from unnest($2::date[], $3::text[], $4::text[], $5::text[], $6::text[],
      $7::text[], $8::text[], $9::smallint[], ${METRICS.map((_, i) => `$${10 + i}::float8[]`).join(", ")})
    on conflict (${plainKey.join(", ")}) do update set
      ${plainValues.map((c) => `${c} = excluded.${c}`).join(", ")}, updated_at = now()`;
  return runConcurrently(batches, concurrency, async (batch) => {
    const parameters = [
      organizationId,
      text(batch.map((r) => r.date)),
      text(batch.map((r) => r.exchangeId)),
      text(batch.map((r) => r.baseCoinId)),
      text(batch.map((r) => r.quoteKey)),
      text(batch.map((r) => r.instrumentType)),
      textArrayLiteral(batch.map((r) => r.quoteCoinId)),
      textArrayLiteral(batch.map((r) => r.type)),
      text(batch.map(() => "2")),
      ...METRICS.map((m) => float8ArrayBinary(batch.map((r) => r.metrics[m] ?? null))),
    ];
    await db.executeQuery(CompiledQuery.raw(statement, parameters));
  });
}

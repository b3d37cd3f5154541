import { randomUUID } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { METRICS, type Report } from "../src/domain/report.js";
import { createReferenceStore } from "../src/store/reference-store.js";
import { createReportStore, metricColumn } from "../src/store/report-store.js";
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

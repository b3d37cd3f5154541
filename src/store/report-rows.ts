import { qualityFlagsOf } from "../domain/quality.js";
import {
  type EligibilityReason,
  type EligibilityStatus,
  type InstrumentType,
  type SubmissionType,
  V1_METRICS,
  V2_ONLY_METRICS,
} from "../domain/report.js";
import type { ReportCsvItem } from "../schemas/report.js";
import { metricColumn } from "./report-store.js";
import type { ReportRow } from "./tables.js";

/** A stored report as the listing reads it, with the names of its exchange and base coin. */
export type ListedRow = Omit<ReportRow, "id" | "created_at" | "updated_at" | "quality_flags"> & {
  quality_flags: number;
  exchange_name: string;
  base_coin_symbol: string;
};

const v1Columns = V1_METRICS.map((m) => [m, metricColumn(m)] as const);
const v2Columns = V2_ONLY_METRICS.map((m) => [m, metricColumn(m)] as const);

/** The listing item of a row, key order and presence as in `ITEM_JSON` (report-listing.ts). */
export function toCsvItem(row: ListedRow, withQualityFlags = false): ReportCsvItem {
  const item: Record<string, unknown> = {
    date: row.date,
    exchangeId: row.exchange_id,
    exchangeName: row.exchange_name,
    baseCoinId: row.base_coin_id,
    baseCoinSymbol: row.base_coin_symbol,
  };
  if (row.quote_coin_id !== null) item.quoteCoinId = row.quote_coin_id;
  if (row.quote_coin_symbol !== null) item.quoteCoinSymbol = row.quote_coin_symbol;
  for (const [metric, column] of v1Columns) item[metric] = row[column as keyof ListedRow];
  item.type = row.type as SubmissionType | null;
  for (const [metric, column] of v2Columns) item[metric] = row[column as keyof ListedRow] ?? null;
  item.eligibilityStatus = row.eligibility_status as EligibilityStatus;
  item.eligibilityReason = row.eligibility_reason as EligibilityReason | null;
  item.instrumentType = row.instrument_type as InstrumentType;
  if (withQualityFlags) item.qualityFlags = qualityFlagsOf(row.quality_flags).join(" ");
  return item as ReportCsvItem;
}

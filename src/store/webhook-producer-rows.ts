import { sql } from "kysely";
import type { InstrumentType } from "../domain/report.js";

// The report versions the webhook event producer reads (its version cursor and its holes).

/** A report version to judge: the organization, coin and day of its report. */
export type TouchedDay = { organizationId: string; baseCoinId: string; date: string };

/** A stored version, with its report's market and the flags it was stored with. */
export type TouchedVersion = TouchedDay & {
  reportId: number;
  exchangeId: string;
  quote: string;
  instrumentType: InstrumentType;
  qualityFlags: number;
  recordedAt: Date;
};

export type VersionRow = {
  id: number;
  report_id: string;
  organization_id: string;
  base_coin_id: string;
  exchange_id: string;
  quote_key: string;
  instrument_type: InstrumentType;
  date: string;
  quality_flags: number;
  recorded_at: Date;
};

export const VERSION_COLUMNS = sql`v.id, v.report_id::text, r.organization_id, r.base_coin_id,
  r.exchange_id, r.quote_key, r.instrument_type, to_char(r.date, 'YYYY-MM-DD') as date,
  v.quality_flags, v.recorded_at`;

export const touched = (r: VersionRow): TouchedVersion => ({
  organizationId: r.organization_id,
  baseCoinId: r.base_coin_id,
  date: r.date,
  reportId: Number(r.report_id),
  exchangeId: r.exchange_id,
  quote: r.quote_key,
  instrumentType: r.instrument_type,
  qualityFlags: Number(r.quality_flags),
  recordedAt: new Date(r.recorded_at),
});

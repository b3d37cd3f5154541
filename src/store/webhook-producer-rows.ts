import { sql } from "kysely";
import type { InstrumentType } from "../domain/report.js";
import type { MarketDay } from "../domain/webhook-event.js";

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

/** An obligation market and day as the producer's queries select it (date as text). */
export type MarketDayRow = {
  organization_id: string;
  base_coin_id: string;
  exchange_id: string;
  quote_key: string;
  instrument_type: InstrumentType;
  date: string;
};

export const marketDayOfRow = (r: MarketDayRow): MarketDay => ({
  organizationId: r.organization_id,
  baseCoinId: r.base_coin_id,
  exchangeId: r.exchange_id,
  quote: r.quote_key,
  instrumentType: r.instrument_type,
  date: r.date,
});

export type VersionRow = MarketDayRow & {
  id: number;
  report_id: string;
  quality_flags: number;
  recorded_at: Date;
};

export const VERSION_COLUMNS = sql`v.id, v.report_id::text, r.organization_id, r.base_coin_id,
  r.exchange_id, r.quote_key, r.instrument_type, to_char(r.date, 'YYYY-MM-DD') as date,
  v.quality_flags, v.recorded_at`;

export const touched = (r: VersionRow): TouchedVersion => ({
  ...marketDayOfRow(r),
  reportId: Number(r.report_id),
  qualityFlags: Number(r.quality_flags),
  recordedAt: new Date(r.recorded_at),
});

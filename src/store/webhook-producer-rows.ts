import type { InstrumentType } from "../domain/report.js";
import type { MarketDay } from "../domain/webhook-event.js";

// The report versions the webhook event producer reads (its version cursor and its holes).

/** The days of one organization and coin that versions read in a pass touched. */
export type TouchedRange = {
  organizationId: string;
  baseCoinId: string;
  dateGte: string;
  dateLte: string;
};

/** A stored version, with its report's market and the flags it was stored with. */
export type TouchedVersion = MarketDay & {
  reportId: number;
  qualityFlags: number;
  recordedAt: Date;
};

/** What a pass reads of the versions stored since the last one (see `versionsToJudge`). */
export type VersionsRead = {
  ranges: TouchedRange[];
  /**
   * The market-days of the versions dated before the first day notifications watched (the
   * producer's `firstDay`) inside an obligation period of their organization and coin: of
   * those days, only these are judged (a report arriving or corrected now), never the
   * untouched markets and days around them.
   */
  earlyDays: MarketDay[];
  /**
   * The versions whose flags differ from their report's flags before them, oldest first.
   * Every other version read changes nothing in quality.flagged's judgement (a report seen
   * again with the flags it had raises nothing and keeps its outcome), so only these are
   * read into the process.
   */
  flagChanges: TouchedVersion[];
  /** How many versions past the cursor were read, and the last one's id (undefined: none). */
  freshCount: number;
  last: number | undefined;
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

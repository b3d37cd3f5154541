/** Metrics both submission versions carry (v1 defaults them). */
export const V1_METRICS = [
  "bidDepth50",
  "askDepth50",
  "bidDepth100",
  "askDepth100",
  "bidDepth200",
  "askDepth200",
  "bidAskDepth50",
  "bidAskDepth100",
  "bidAskDepth200",
  "bidAskSpread",
  "orderFillVolumeMaker",
  "orderFillVolumeTaker",
] as const;

/** Metrics only v2 carries; null on a record last submitted through v1. */
export const V2_ONLY_METRICS = [
  "bidDepthTob",
  "bidDepth10",
  "bidDepth25",
  "askDepthTob",
  "askDepth10",
  "askDepth25",
  "topOfBookPercentage",
  "orderFillVolumeMakerTob",
] as const;

export const METRICS = [...V1_METRICS, ...V2_ONLY_METRICS] as const;

/** Metrics that are percentages, 0..100 in both versions; every other metric is >= 0. */
export const PERCENTAGE_METRICS = new Set<Metric>(["bidAskSpread", "topOfBookPercentage"]);

export type V1Metric = (typeof V1_METRICS)[number];
export type V2OnlyMetric = (typeof V2_ONLY_METRICS)[number];
export type Metric = (typeof METRICS)[number];

export const INSTRUMENT_TYPES = ["spot", "perp"] as const;
export type InstrumentType = (typeof INSTRUMENT_TYPES)[number];

export const SUBMISSION_TYPES = ["project", "exchange", "prop"] as const;
export type SubmissionType = (typeof SUBMISSION_TYPES)[number];

export type SchemaVersion = 1 | 2;

export const ELIGIBILITY_REASONS = [
  "exchange_market_data_missing",
  "base_not_traded",
  "pair_not_found",
  "before_collection_start",
] as const;
export type EligibilityReason = (typeof ELIGIBILITY_REASONS)[number];
/** The listing's eligibilityStatus values (spec section 3); the store writes them too. */
export const ELIGIBILITY_STATUSES = ["eligible", "ineligible_market_data_missing"] as const;
export type EligibilityStatus = (typeof ELIGIBILITY_STATUSES)[number];

/**
 * What identifies a report within its organization (spec section 3), after exchange routing.
 * `quoteKey` is the quote coin id when given, else the upper-cased quote symbol.
 */
export type RecordKey = {
  date: string;
  exchangeId: string;
  baseCoinId: string;
  quoteKey: string;
  instrumentType: InstrumentType;
};

/** A validated, routed report ready to be stored: the latest version of its key. */
export type Report = RecordKey & {
  quoteCoinId: string | null;
  quoteCoinSymbol: string | null;
  type: SubmissionType | null;
  schemaVersion: SchemaVersion;
  /** A v1 report has no v2-only metric: absent (or null) is stored as null. */
  metrics: Readonly<Record<V1Metric, number> & Partial<Record<V2OnlyMetric, number | null>>>;
  eligibilityReason: EligibilityReason | null;
  /**
   * A v1 report's metrics its record left out: stored at the specification's defaults, but no
   * value the market maker reported, so the quality flags skip them (CONTRACT section 6,
   * "among present values"). Absent when the record sent every metric, and in v2.
   */
  omittedMetrics?: readonly V1Metric[];
};

/**
 * The metrics as stored: a metric of -0 as 0. JSON has `-0` (and `-0.0`), `>= 0` admits it and
 * float8 keeps its sign, so a -0 stored as sent would be listed as `-0` in JSON (PostgreSQL's
 * text of the float) and `0` in CSV: the same number, written two ways. Returns the metrics
 * themselves when none is -0, as nearly always: no copy per record.
 */
export function withoutNegativeZeros<M extends Report["metrics"]>(metrics: M): M {
  if (!METRICS.some((m) => Object.is(metrics[m], -0))) return metrics;
  const copy: Record<string, unknown> = { ...metrics };
  for (const m of METRICS) if (Object.is(copy[m], -0)) copy[m] = 0;
  return copy as M;
}

export function quoteKeyOf(quoteCoinId: string | null, quoteCoinSymbol: string | null): string {
  return quoteCoinId ?? (quoteCoinSymbol ?? "").toUpperCase();
}

export function recordKeyString(key: RecordKey): string {
  return `${key.date}\u0000${key.exchangeId}\u0000${key.baseCoinId}\u0000${key.quoteKey}\u0000${key.instrumentType}`;
}

/** Orders keys the same way in every batch so that concurrent writers lock rows in one order. */
export function compareRecordKeys(a: RecordKey, b: RecordKey): number {
  return compareKeyStrings(recordKeyString(a), recordKeyString(b));
}

const compareKeyStrings = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** A batch in `compareRecordKeys` order, each key string made once (not twice a comparison). */
export function sortByRecordKey<R extends RecordKey>(reports: readonly R[]): R[] {
  const keyed = reports.map((report) => ({ key: recordKeyString(report), report }));
  keyed.sort((a, b) => compareKeyStrings(a.key, b.key));
  return keyed.map((k) => k.report);
}

export function eligibilityStatusOf(reason: EligibilityReason | null): EligibilityStatus {
  return reason === null ? ELIGIBILITY_STATUSES[0] : ELIGIBILITY_STATUSES[1];
}

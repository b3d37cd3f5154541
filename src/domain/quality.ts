import type { Report } from "./report.js";

/**
 * The quality flags of CONTRACT section 6, in bit order: a stored version keeps them as a
 * bitmask (bit i set = flag i). Flags never reject a record; they describe it.
 */
export const QUALITY_FLAGS = [
  "depth_not_monotonic",
  "total_depth_mismatch",
  "maker_tob_exceeds_maker",
  "exceeds_public_depth",
] as const;
export type QualityFlag = (typeof QUALITY_FLAGS)[number];

export const qualityFlagBit = (flag: QualityFlag): number => 1 << QUALITY_FLAGS.indexOf(flag);

export function qualityFlagsOf(mask: number): QualityFlag[] {
  return QUALITY_FLAGS.filter((flag) => (mask & qualityFlagBit(flag)) !== 0);
}

/** `bidAskDepthN` may differ from `bidDepthN + askDepthN` by this share of the sum, no more. */
const TOTAL_DEPTH_TOLERANCE = 0.01;

/** Default of PUBLIC_DEPTH_TOLERANCE: reported ±2 % depth may exceed the public book by 10 %. */
export const DEFAULT_PUBLIC_DEPTH_TOLERANCE = 0.1;

type Metrics = Report["metrics"];

const BANDS = ["Tob", "10", "25", "50", "100", "200"] as const;
const TOTALS = ["50", "100", "200"] as const;
type MetricKey = keyof Metrics;

// The metric names are made once: a name built per record is a new string to look up.
/** Each side's bands, narrowest first. */
const SIDE_BANDS: readonly (readonly MetricKey[])[] = (["bid", "ask"] as const).map((side) =>
  BANDS.map((band) => `${side}Depth${band}` as MetricKey),
);
const TOTAL_BANDS = TOTALS.map((band) => ({
  bid: `bidDepth${band}` as const,
  ask: `askDepth${band}` as const,
  total: `bidAskDepth${band}` as const,
}));

/** On a side, a wider band holds less than a narrower one (absent bands are skipped). */
function depthNotMonotonic(metrics: Metrics, omitted: readonly MetricKey[]): boolean {
  return SIDE_BANDS.some((keys) => {
    let widest = Number.NEGATIVE_INFINITY;
    for (const key of keys) {
      const value = metrics[key];
      if (value === null || value === undefined || omitted.includes(key)) continue;
      if (value < widest) return true;
      widest = value;
    }
    return false;
  });
}

/** A band's total against its sides, where the record sent all three. */
function totalDepthMismatch(metrics: Metrics, omitted: readonly MetricKey[]): boolean {
  return TOTAL_BANDS.some(({ bid, ask, total }) => {
    if (omitted.length > 0 && [bid, ask, total].some((key) => omitted.includes(key))) return false;
    let sides = metrics[bid] + metrics[ask];
    let stated = metrics[total];
    // Two finite depths may sum past the largest double: compare halves then (exact for
    // numbers that large), or an infinite sum would never differ by more than 1 % of itself.
    if (sides === Number.POSITIVE_INFINITY) {
      sides = metrics[bid] / 2 + metrics[ask] / 2;
      stated /= 2;
    }
    return Math.abs(stated - sides) > TOTAL_DEPTH_TOLERANCE * sides;
  });
}

function makerTobExceedsMaker(metrics: Metrics): boolean {
  const tob = metrics.orderFillVolumeMakerTob;
  return tob !== null && tob !== undefined && tob > metrics.orderFillVolumeMaker;
}

const NONE_OMITTED: readonly MetricKey[] = [];

/**
 * The flags a report's own numbers raise, as a bitmask, leaving out the metrics a v1 record
 * did not send (`omitted`: stored at their defaults, not reported). (`exceeds_public_depth`
 * needs the public book of the day: the store sets it.)
 */
export function plausibilityMask(
  metrics: Metrics,
  omitted: readonly MetricKey[] = NONE_OMITTED,
): number {
  return (
    (depthNotMonotonic(metrics, omitted) ? qualityFlagBit("depth_not_monotonic") : 0) |
    (totalDepthMismatch(metrics, omitted) ? qualityFlagBit("total_depth_mismatch") : 0) |
    (makerTobExceedsMaker(metrics) ? qualityFlagBit("maker_tob_exceeds_maker") : 0)
  );
}

/**
 * Reported depth above the public depth by more than `tolerance` (a share: 0.1 = 10 %).
 * The store writes the same comparison in SQL (quality-sql.ts).
 */
export const EXCEEDS_PUBLIC_DEPTH_BIT = qualityFlagBit("exceeds_public_depth");

/**
 * The public order book of one market at one moment (CoinGecko's exchange tickers with
 * depth=true): the USD it costs to move the price 2 % up (the asks within +2 %) and 2 % down
 * (the bids within −2 %), the spread and the day's volume in USD. Any of them may be absent.
 */
export type PublicDepthSnapshot = {
  exchangeId: string;
  baseCoinId: string;
  instrumentType: "spot" | "perp";
  quoteSymbol: string;
  quoteCoinId: string | null;
  /** The UTC day of `takenAt`: the day whose reports it checks. */
  date: string;
  takenAt: Date;
  costToMoveUpUsd: number | null;
  costToMoveDownUsd: number | null;
  bidAskSpreadPercentage: number | null;
  volumeUsd: number | null;
  source: "coingecko" | "fixture";
};

/** A market on a day: what a snapshot changes the flags of. */
export type MarketDay = Pick<
  PublicDepthSnapshot,
  "exchangeId" | "baseCoinId" | "instrumentType" | "quoteSymbol" | "date"
>;

import type { MarketDay } from "../domain/quality.js";
import type { Stores } from "../store/stores.js";

/**
 * Reports per statement. Each statement reads one id range and locks only the rows whose flag
 * changes, for the time of that range: a submission touching those rows waits at most that
 * long (measured by bench/quality.ts).
 */
const DEFAULT_BATCH = 20_000;

export type RecomputeResult = { changed: number; batches: number };

/**
 * Recomputes `exceeds_public_depth` of every report (or of those of `days`), walking the
 * reports by id in ranges of `batchSize`, each range its own short statement.
 */
export async function recomputePublicDepthFlags(
  stores: Pick<Stores, "qualityDepth">,
  options: { days?: MarketDay[]; batchSize?: number } = {},
): Promise<RecomputeResult> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const range = await stores.qualityDepth.reportIdRange();
  const result = { changed: 0, batches: 0 };
  if (range === undefined) return result;
  for (let from = range.min; from <= range.max; from += batchSize) {
    result.changed += await stores.qualityDepth.recomputeRange(
      from,
      from + batchSize,
      options.days,
    );
    result.batches++;
  }
  return result;
}

import type { MarketDay } from "../domain/quality.js";
import type { Stores } from "../store/stores.js";

/**
 * Each statement reads one id range and locks the rows whose flag changes until it ends: a
 * submission rewriting one of them waits that long. The range is sized after each statement
 * so that one takes about TARGET_MS (a loaded server gets smaller ranges), within bounds.
 */
const TARGET_MS = 200;
const FIRST_BATCH = 5_000;
const MIN_BATCH = 500;
const MAX_BATCH = 100_000;

export type RecomputeResult = { changed: number; batches: number };

/**
 * Recomputes `exceeds_public_depth` of every report (or of those of `days`), walking the
 * reports by id in ranges, each range its own short statement.
 */
export async function recomputePublicDepthFlags(
  stores: Pick<Stores, "qualityDepth">,
  options: { days?: MarketDay[]; targetMs?: number } = {},
): Promise<RecomputeResult> {
  const range = await stores.qualityDepth.reportIdRange();
  const result = { changed: 0, batches: 0 };
  if (range === undefined) return result;
  let size = FIRST_BATCH;
  for (let from = range.min; from <= range.max; ) {
    const started = performance.now();
    result.changed += await stores.qualityDepth.recomputeRange(from, from + size, options.days);
    result.batches++;
    // The next range starts where this one ended, whatever size the next one gets.
    from += size;
    const elapsed = Math.max(1, performance.now() - started);
    // Grows at most twofold a step: one quick range says little about the next.
    const next = Math.min(size * 2, (size * (options.targetMs ?? TARGET_MS)) / elapsed);
    size = Math.round(Math.min(MAX_BATCH, Math.max(MIN_BATCH, next)));
  }
  return result;
}

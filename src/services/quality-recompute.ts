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
/**
 * Ranges run on this many connections at once: a range's time is partly waiting for the disk
 * and for WAL flushes, which another range's CPU work can fill.
 */
const WALKERS = 2;
/**
 * A load's market-days are recomputed through the key indexes (one probe per organization and
 * market-day) while the probes, and the reports they find, are each at most a tenth of the
 * reports, or MIN_SCOPED: a probe, or a report recomputed by id, costs a few µs, the walk about
 * half a µs a report (4.3 s at 10 M). Beyond, the reports are walked by id.
 */
const WALKED_PER_SCOPED = 10;
const MIN_SCOPED = 1_000;
/** Reports found through the indexes are recomputed this many to a statement. */
const REPORTS_PER_STATEMENT = 2_000;

export type RecomputeResult = { changed: number; batches: number };

type RecomputeOptions = {
  days?: MarketDay[];
  targetMs?: number;
  walkers?: number;
  /** The most probes, and reports found by them, before walking instead. */
  maxScoped?: number;
};

/**
 * Recomputes `exceeds_public_depth` of every report, or of those of `days`. A few days' reports
 * are found through the key indexes, so that a load changing one market-day reads that day's
 * reports only; otherwise the reports are walked by id.
 */
export async function recomputePublicDepthFlags(
  stores: Pick<Stores, "qualityDepth">,
  options: RecomputeOptions = {},
): Promise<RecomputeResult> {
  if (options.days === undefined) return walkReports(stores, options);
  // The days' public depth just changed: submissions that began before it are waited for.
  // Reports written after that computed their flags from the new depth.
  await stores.qualityDepth.awaitReportWritesInFlight();
  const range = await stores.qualityDepth.reportIdRange();
  if (range === undefined) return { changed: 0, batches: 0 };
  const reports = range.max - range.min + 1;
  const max = options.maxScoped ?? Math.max(MIN_SCOPED, reports / WALKED_PER_SCOPED);
  const ids = await stores.qualityDepth.reportIdsOfDays(options.days, max);
  if (ids === undefined) return walkReports(stores, options, range);
  const result = { changed: 0, batches: 0 };
  for (let i = 0; i < ids.length; i += REPORTS_PER_STATEMENT) {
    result.changed += await stores.qualityDepth.recomputeReports(
      ids.slice(i, i + REPORTS_PER_STATEMENT),
    );
    result.batches++;
  }
  return result;
}

/**
 * Walks the reports by id in ranges, each range its own short statement. The walkers take
 * ranges from one shared cursor, so each id is in exactly one range whatever sizes they pick.
 */
async function walkReports(
  stores: Pick<Stores, "qualityDepth">,
  options: RecomputeOptions,
  idRange?: { min: number; max: number },
): Promise<RecomputeResult> {
  const range = idRange ?? (await stores.qualityDepth.reportIdRange());
  const result = { changed: 0, batches: 0 };
  if (range === undefined) return result;
  let next = range.min;
  let failed = false;
  const walk = async () => {
    let size = FIRST_BATCH;
    while (next <= range.max && !failed) {
      // Claimed before awaiting: the other walker goes on from where this range ends.
      const from = next;
      next += size;
      const started = performance.now();
      let changed: number;
      try {
        changed = await stores.qualityDepth.recomputeRange(from, from + size, options.days);
      } catch (error) {
        failed = true;
        throw error;
      }
      // Added after the await: `result.changed += await …` would read the sum before it and
      // lose what the other walker added meanwhile.
      result.changed += changed;
      result.batches++;
      const elapsed = Math.max(1, performance.now() - started);
      // Grows at most twofold a step: one quick range says little about the next.
      const target = (size * (options.targetMs ?? TARGET_MS)) / elapsed;
      size = Math.round(Math.min(MAX_BATCH, Math.max(MIN_BATCH, Math.min(size * 2, target))));
    }
  };
  // Settles only once every walker has stopped: no statement outlives the call.
  const walkers = await Promise.allSettled(
    Array.from({ length: options.walkers ?? WALKERS }, walk),
  );
  for (const walker of walkers) if (walker.status === "rejected") throw walker.reason;
  return result;
}

/**
 * Recomputes the market-days noted as pending (a load's own days, and any an earlier load
 * left when it failed or its process stopped), then clears the notes it read.
 */
export async function recomputePendingDepthFlags(
  stores: Pick<Stores, "qualityDepth">,
): Promise<RecomputeResult> {
  const pending = await stores.qualityDepth.pendingRecomputes();
  if (pending.length === 0) return { changed: 0, batches: 0 };
  const result = await recomputePublicDepthFlags(stores, { days: pending.map((p) => p.day) });
  await stores.qualityDepth.clearPendingRecomputes(pending);
  return result;
}

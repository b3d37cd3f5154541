import type { BenchResults, ListingAtSize, ListingResults, TargetResults } from "./results.js";

/**
 * `current` with every part it did not measure taken from `previous` (the run before, as
 * bench/results/latest.json holds it), so that a run of one engine or of a few parts
 * (`npm run bench -- pglite --embedded-only`) completes the full run's file instead of
 * replacing it. Each part taken over is named in `earlierParts` with the date it was measured.
 * Nothing is taken from a run of another mode (quick or full) or of another machine: their
 * figures do not compare.
 */
export function withEarlierParts(
  previous: BenchResults | undefined,
  current: BenchResults,
): BenchResults {
  if (previous === undefined || !comparable(previous, current)) return current;
  const earlier = new Map<string, string>();
  // A part's date: its own or its nearest enclosing part's in the earlier file, which may
  // have kept the whole of `postgres.listing.1000000` from a run before it.
  const measuredOn = (name: string): string => {
    for (let part = name; part !== ""; part = part.slice(0, Math.max(0, part.lastIndexOf(".")))) {
      const date = previous.earlierParts?.[part];
      if (date !== undefined) return date;
    }
    return previous.date;
  };
  const take = <T>(name: string, now: T | undefined, before: T | undefined): T | undefined => {
    if (isMeasured(now) || !isMeasured(before)) return now;
    earlier.set(name, measuredOn(name));
    // What the earlier file had itself kept from a run before it stays dated as it was.
    for (const [kept, date] of Object.entries(previous.earlierParts ?? {}))
      if (kept.startsWith(`${name}.`)) earlier.set(kept, date);
    return before;
  };
  const merged: BenchResults = { ...current };
  for (const engine of ["postgres", "pglite"] as const) {
    const target = mergeTarget(engine, previous[engine], current[engine], take);
    if (target !== undefined) merged[engine] = target;
  }
  const quality = take("postgresQuality", current.postgresQuality, previous.postgresQuality);
  if (quality !== undefined) merged.postgresQuality = quality;
  const cluster = take("cluster", current.cluster, previous.cluster);
  if (cluster !== undefined) merged.cluster = cluster;
  if (earlier.size > 0) merged.earlierParts = Object.fromEntries([...earlier].sort());
  else delete merged.earlierParts;
  return merged;
}

type Take = <T>(name: string, now: T | undefined, before: T | undefined) => T | undefined;

function mergeTarget(
  engine: string,
  before: TargetResults | undefined,
  now: TargetResults | undefined,
  take: Take,
): TargetResults | undefined {
  if (before === undefined) return now;
  const out: TargetResults = { ...now };
  for (const part of Object.keys(before) as (keyof TargetResults)[]) {
    if (part === "listing") continue;
    const value = take(`${engine}.${part}`, now?.[part], before[part]);
    if (value !== undefined) Object.assign(out, { [part]: value });
  }
  const listing = mergeListing(`${engine}.listing`, before.listing, now?.listing, take);
  if (listing !== undefined) out.listing = listing;
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Sizes, and at each size its queries, scorecards, dashboard and pause, one by one. */
function mergeListing(
  name: string,
  before: ListingResults | undefined,
  now: ListingResults | undefined,
  take: Take,
): ListingResults | undefined {
  if (before === undefined) return now;
  const sizes: Record<string, ListingAtSize> = { ...now?.sizes };
  for (const [size, old] of Object.entries(before.sizes)) {
    const fresh = now?.sizes[size];
    const at = `${name}.${size}`;
    if (fresh === undefined) {
      const kept = take(at, undefined, old);
      if (kept !== undefined) sizes[size] = kept;
      continue;
    }
    const queriesKept = !isMeasured(fresh.queries) && isMeasured(old.queries);
    sizes[size] = {
      ...fresh,
      queries: take(`${at}.queries`, fresh.queries, old.queries) ?? {},
      // The listing's memory figure belongs with its queries.
      listingPeakRssMb: queriesKept ? old.listingPeakRssMb : fresh.listingPeakRssMb,
      // A run of the market-data pause alone measures no suite's memory (0).
      serverPeakRssMb: fresh.serverPeakRssMb || old.serverPeakRssMb,
      scorecards: take(`${at}.scorecards`, fresh.scorecards, old.scorecards),
      dashboard: take(`${at}.dashboard`, fresh.dashboard, old.dashboard),
      marketDataPause: take(`${at}.marketDataPause`, fresh.marketDataPause, old.marketDataPause),
    };
  }
  const growthP50 = take(`${name}.growthP50`, now?.growthP50, before.growthP50);
  return { sizes, growthP50 };
}

function comparable(a: BenchResults, b: BenchResults): boolean {
  return (
    a.quick === b.quick &&
    a.machine.cores === b.machine.cores &&
    a.machine.cpu === b.machine.cpu &&
    a.machine.node === b.machine.node
  );
}

/** A part counts as measured when it holds something: an empty `{}` is a part not run. */
function isMeasured(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

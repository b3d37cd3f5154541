import { describe, expect, it } from "vitest";
import { withEarlierParts } from "../bench/merge-results.js";
import type { BenchResults, ListingAtSize } from "../bench/results.js";

const machine = { cores: 2, cpu: "Xeon", node: "v20.20.2" };
const query = { p50Ms: 5, p99Ms: 9, requests: 200, totalCount: 10, errors: 0 };
const scorecard = { p50Ms: 140, p99Ms: 180, requests: 200, items: 400, errors: 0 };
const pause = { loadMs: 161, longestStallMs: 148 } as unknown as ListingAtSize["marketDataPause"];

const atSize = (parts: Partial<ListingAtSize>): ListingAtSize => ({
  queries: {},
  serverPeakRssMb: 0,
  ...parts,
});

/** A full run: PostgreSQL ingest and listing at one size, PGlite's embedded figures. */
const fullRun: BenchResults = {
  date: "2026-11-25T01:52:00.000Z",
  quick: false,
  machine,
  postgres: {
    ingest: { ratioToStore: 0.62 } as never,
    listing: {
      sizes: {
        "1000000": atSize({
          queries: { "page 1": query },
          scorecards: { year: scorecard },
          marketDataPause: pause,
          listingPeakRssMb: 278,
          serverPeakRssMb: 300,
        }),
      },
    },
  },
  pglite: { embedded: { npmStartRssMb: 385 } as never },
};

describe("withEarlierParts: a partial benchmark run completes the file of the run before", () => {
  it("keeps the other engine's parts, each named with the date it was measured", () => {
    const pgliteOnly: BenchResults = {
      date: "2026-11-25T05:00:00.000Z",
      quick: false,
      machine,
      pglite: { embedded: { npmStartRssMb: 370 } as never },
    };
    const merged = withEarlierParts(fullRun, pgliteOnly);
    expect(merged.date).toBe(pgliteOnly.date);
    expect(merged.pglite).toEqual(pgliteOnly.pglite);
    expect(merged.postgres).toEqual(fullRun.postgres);
    expect(merged.earlierParts).toEqual({
      "postgres.ingest": fullRun.date,
      "postgres.listing.1000000": fullRun.date,
    });
  });

  it("at one size, keeps the listing's queries (and their memory figure) when only the scorecards ran", () => {
    const scorecardsOnly: BenchResults = {
      date: "2026-11-25T05:00:00.000Z",
      quick: false,
      machine,
      postgres: {
        listing: {
          sizes: {
            "1000000": atSize({
              scorecards: { year: { ...scorecard, p99Ms: 150 } },
              listingPeakRssMb: 200,
              serverPeakRssMb: 250,
            }),
          },
        },
      },
    };
    const merged = withEarlierParts(fullRun, scorecardsOnly);
    const size = merged.postgres?.listing?.sizes["1000000"];
    expect(size?.queries).toEqual({ "page 1": query });
    expect(size?.listingPeakRssMb).toBe(278);
    expect(size?.scorecards?.year?.p99Ms).toBe(150);
    expect(size?.marketDataPause).toEqual(pause);
    expect(size?.serverPeakRssMb).toBe(250);
    expect(merged.postgres?.ingest).toEqual(fullRun.postgres?.ingest);
    expect(merged.earlierParts).toEqual({
      "pglite.embedded": fullRun.date,
      "postgres.ingest": fullRun.date,
      "postgres.listing.1000000.marketDataPause": fullRun.date,
      "postgres.listing.1000000.queries": fullRun.date,
    });
  });

  it("keeps the suite's memory figure when only the market-data pause ran (it measures none)", () => {
    const pauseOnly: BenchResults = {
      date: "2026-11-25T05:00:00.000Z",
      quick: false,
      machine,
      postgres: {
        listing: { sizes: { "1000000": atSize({ marketDataPause: pause, serverPeakRssMb: 0 }) } },
      },
    };
    const size = withEarlierParts(fullRun, pauseOnly).postgres?.listing?.sizes["1000000"];
    expect(size?.serverPeakRssMb).toBe(
      fullRun.postgres?.listing?.sizes["1000000"]?.serverPeakRssMb,
    );
    expect(size?.serverPeakRssMb).toBeGreaterThan(0);
  });

  it("keeps the date of a part the earlier file had itself kept", () => {
    const first = withEarlierParts(fullRun, {
      date: "2026-11-25T05:00:00.000Z",
      quick: false,
      machine,
      pglite: { embedded: { npmStartRssMb: 370 } as never },
    });
    const second = withEarlierParts(first, {
      date: "2026-11-25T06:00:00.000Z",
      quick: false,
      machine,
      postgres: { ingest: { ratioToStore: 0.7 } as never },
    });
    expect(second.postgres?.ingest).toEqual({ ratioToStore: 0.7 });
    expect(second.earlierParts).toEqual({
      "pglite.embedded": "2026-11-25T05:00:00.000Z",
      "postgres.listing.1000000": fullRun.date,
    });
  });

  it("dates a part by the enclosing part the earlier file kept, three runs on", () => {
    const ingestOnly = withEarlierParts(fullRun, {
      date: "2026-11-25T05:00:00.000Z",
      quick: false,
      machine,
      postgres: { ingest: { ratioToStore: 0.7 } as never },
      pglite: { embedded: { npmStartRssMb: 370 } as never },
    });
    expect(ingestOnly.earlierParts?.["postgres.listing.1000000"]).toBe(fullRun.date);
    const scorecardsOnly = withEarlierParts(ingestOnly, {
      date: "2026-11-25T06:00:00.000Z",
      quick: false,
      machine,
      postgres: {
        listing: { sizes: { "1000000": atSize({ scorecards: { year: scorecard } }) } },
      },
    });
    expect(scorecardsOnly.earlierParts).toEqual({
      "pglite.embedded": "2026-11-25T05:00:00.000Z",
      "postgres.ingest": "2026-11-25T05:00:00.000Z",
      "postgres.listing.1000000.marketDataPause": fullRun.date,
      "postgres.listing.1000000.queries": fullRun.date,
    });
  });

  it("names a kept growth figure of the listing too", () => {
    const withGrowth: BenchResults = {
      ...fullRun,
      postgres: { ...fullRun.postgres, listing: { sizes: {}, growthP50: { "page 1": 1.2 } } },
    };
    const merged = withEarlierParts(withGrowth, {
      date: "2026-11-25T05:00:00.000Z",
      quick: false,
      machine,
      postgres: {
        listing: { sizes: { "1000000": atSize({ queries: { "page 1": query } }) } },
      },
    });
    expect(merged.postgres?.listing?.growthP50).toEqual({ "page 1": 1.2 });
    expect(merged.earlierParts?.["postgres.listing.growthP50"]).toBe(fullRun.date);
  });

  it("takes nothing from a run of another mode or machine, or when there is none", () => {
    const quick: BenchResults = { date: "2026-11-25T05:00:00.000Z", quick: true, machine };
    expect(withEarlierParts(fullRun, quick)).toEqual(quick);
    const elsewhere = { ...quick, quick: false, machine: { ...machine, cpu: "EPYC" } };
    expect(withEarlierParts(fullRun, elsewhere)).toEqual(elsewhere);
    expect(withEarlierParts(undefined, quick)).toEqual(quick);
  });

  it("a full run keeps nothing earlier", () => {
    const again = { ...fullRun, date: "2026-11-25T07:00:00.000Z" };
    const merged = withEarlierParts(fullRun, again);
    expect(merged).toEqual(again);
    expect(merged.earlierParts).toBeUndefined();
  });
});

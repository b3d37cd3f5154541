import type { Problem } from "../domain/errors.js";
import type { MarketDay, PublicDepthSnapshot } from "../domain/quality.js";
import type { Market } from "../domain/reference-data.js";
import type { Fixture } from "../schemas/fixture.js";
import type { FixtureDepthSnapshot } from "../schemas/quality.js";
import type { Stores } from "../store/stores.js";

type MarketOf = Pick<Market, "exchangeId" | "baseCoinId" | "quoteSymbol" | "instrumentType"> & {
  quoteCoinId?: string | null;
};

const marketKey = (m: MarketOf) =>
  [m.exchangeId, m.baseCoinId, m.instrumentType, m.quoteSymbol.toUpperCase()].join(" ");

const takenAtOf = (s: FixtureDepthSnapshot) => new Date(s.takenAt ?? `${s.date}T00:00:00Z`);

/**
 * A fixture's `depthSnapshots` entries that name no market of the reference data (the fixture's
 * or the stored), or repeat another entry's market and time.
 */
export function depthSnapshotProblems(
  entries: readonly (FixtureDepthSnapshot | undefined)[],
  markets: MarketOf[],
): Problem[] {
  const known = new Set(markets.map(marketKey));
  const seen = new Map<string, number>();
  const problems: Problem[] = [];
  entries.forEach((s, i) => {
    if (s === undefined) return;
    const market = marketKey(s);
    if (!known.has(market)) {
      const name = `${s.exchangeId} ${s.baseCoinId}/${s.quoteSymbol} (${s.instrumentType})`;
      problems.push({ path: `depthSnapshots.${i}`, message: `unknown market ${name}` });
    }
    const key = `${market} ${takenAtOf(s).toISOString()}`;
    const first = seen.get(key);
    if (first !== undefined)
      problems.push({
        path: `depthSnapshots.${i}`,
        message: `duplicate of depthSnapshots.${first}`,
      });
    else seen.set(key, i);
  });
  return problems;
}

/** The fixture's snapshots, each with its market's quote coin (checked: every market exists). */
function fixtureDepthSnapshots(
  entries: FixtureDepthSnapshot[],
  markets: MarketOf[],
): PublicDepthSnapshot[] {
  const byKey = new Map(markets.map((m) => [marketKey(m), m]));
  return entries.map((s) => ({
    exchangeId: s.exchangeId,
    baseCoinId: s.baseCoinId,
    instrumentType: s.instrumentType,
    quoteSymbol: s.quoteSymbol.toUpperCase(),
    quoteCoinId: byKey.get(marketKey(s))?.quoteCoinId ?? null,
    date: s.date,
    takenAt: takenAtOf(s),
    costToMoveUpUsd: s.costToMoveUpUsd ?? null,
    costToMoveDownUsd: s.costToMoveDownUsd ?? null,
    bidAskSpreadPercentage: s.bidAskSpreadPercentage ?? null,
    volumeUsd: s.volumeUsd ?? null,
    source: "fixture",
  }));
}

/** Keeps a fixture's snapshots; returns the market-days whose public depth changed. */
export async function recordFixtureDepth(
  stores: Pick<Stores, "qualityDepth" | "references">,
  fixture: Fixture,
): Promise<MarketDay[]> {
  if (!fixture.depthSnapshots?.length) return [];
  const { snapshot } = await stores.references.snapshot();
  return stores.qualityDepth.record(
    fixtureDepthSnapshots(fixture.depthSnapshots, snapshot.markets),
  );
}

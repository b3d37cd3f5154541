import type { Caller } from "../domain/caller.js";
import { ForbiddenError } from "../domain/errors.js";
import type { Stores } from "../store/stores.js";
import type { ReferenceDataCache } from "./reference-data.js";

type OperatorDeps = Pick<Stores, "organizations" | "operator"> & {
  referenceData: ReferenceDataCache;
};

/** Reads of the whole platform: the operator's only (CONTRACT section 4, "reads everything"). */
function assertOperator(caller: Caller): void {
  if (caller.kind !== "operator") {
    throw new ForbiddenError("Only an operator key reads the platform's organizations and keys");
  }
}

export type ExchangeFreshness = {
  id: string;
  name: string;
  marketData: boolean;
  /** Markets with market data on this exchange. */
  markets: number;
  /** The latest date from which one of its markets is collected (a recently added market). */
  latestCollectedSince: string | null;
};

/**
 * The operator's views of the platform. Organizations, engagements and keys come from the
 * stores (keys: prefix, label, times; never a secret or hash); exchanges and markets from the
 * reference data every request validates against.
 */
export function createOperatorViews(deps: OperatorDeps) {
  return {
    async organizations(caller: Caller) {
      assertOperator(caller);
      return deps.organizations.organizations();
    },

    async engagements(caller: Caller) {
      assertOperator(caller);
      return deps.operator.engagements();
    },

    async apiKeys(caller: Caller) {
      assertOperator(caller);
      return deps.operator.apiKeys();
    },

    /** When market data last synced and changed; per exchange, its markets (none: no data). */
    async marketDataFreshness(caller: Caller) {
      assertOperator(caller);
      const [freshness, reference] = await Promise.all([
        deps.operator.referenceFreshness(),
        deps.referenceData.current(),
      ]);
      const perExchange = new Map<string, { markets: number; latest: string | null }>();
      for (const market of reference.snapshot.markets) {
        const entry = perExchange.get(market.exchangeId) ?? { markets: 0, latest: null };
        entry.markets++;
        if (entry.latest === null || market.collectedSince > entry.latest) {
          entry.latest = market.collectedSince;
        }
        perExchange.set(market.exchangeId, entry);
      }
      const exchanges: ExchangeFreshness[] = [...reference.exchanges.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((e) => ({
          id: e.id,
          name: e.name,
          marketData: e.marketData,
          markets: e.marketData ? (perExchange.get(e.id)?.markets ?? 0) : 0,
          latestCollectedSince: e.marketData ? (perExchange.get(e.id)?.latest ?? null) : null,
        }));
      return { ...freshness, exchanges };
    },
  };
}

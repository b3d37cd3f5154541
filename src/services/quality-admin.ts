import type { CoinGeckoClient, RetryInfo } from "../adapters/coingecko-client.js";
import { CoinGeckoError } from "../adapters/coingecko-http.js";
import type { CoinGeckoTicker } from "../adapters/coingecko-schemas.js";
import type { Stores } from "../store/stores.js";
import { recomputePendingDepthFlags, recomputePublicDepthFlags } from "./quality-recompute.js";
import { depthSnapshotsOf, recordDepthSnapshots } from "./quality-snapshots.js";

/** What `market-data sync` (with or without --depth-only) is asked for. */
export type SyncOptions = {
  coinIds?: string[];
  exchangeIds?: string[];
  onRetry?: (info: RetryInfo) => void;
  onProgress?: (done: number, total: number, label: string) => void;
};

type QualityAdminOptions = {
  now: () => Date;
  coinGecko: (onRetry: (info: RetryInfo) => void) => CoinGeckoClient;
};

/** Operator use cases of data quality: public depth snapshots and flag recomputation. */
export function createQualityAdmin(stores: Stores, options: QualityAdminOptions) {
  return {
    /**
     * `market-data sync --depth-only`: only the exchange tickers (depth=true) of the spot
     * markets already stored, one paged request per exchange; no coin or exchange list, and
     * reference data is left as it is.
     */
    async syncDepthSnapshots(query: SyncOptions) {
      const client = options.coinGecko(query.onRetry ?? (() => {}));
      const { snapshot } = await stores.references.snapshot();
      const markets = snapshot.markets.filter(
        (m) =>
          m.instrumentType === "spot" &&
          (query.coinIds === undefined || query.coinIds.includes(m.baseCoinId)) &&
          (query.exchangeIds === undefined || query.exchangeIds.includes(m.exchangeId)),
      );
      const coinsByExchange = new Map<string, Set<string>>();
      for (const m of markets) {
        const coins = coinsByExchange.get(m.exchangeId) ?? new Set<string>();
        coinsByExchange.set(m.exchangeId, coins.add(m.baseCoinId));
      }
      const { tickers, warnings } = await depthTickers(client, coinsByExchange, query);
      // An id mistyped or without spot markets would otherwise be passed over in silence.
      for (const id of query.exchangeIds ?? [])
        if (!coinsByExchange.has(id)) warnings.push(`no stored spot market on exchange '${id}'`);
      for (const id of query.coinIds ?? [])
        if (!markets.some((m) => m.baseCoinId === id))
          warnings.push(`no stored spot market of coin '${id}'`);
      const summary = await recordDepthSnapshots(
        stores,
        depthSnapshotsOf(tickers, markets, options.now()),
      );
      return { exchanges: coinsByExchange.size, ...summary, warnings };
    },

    /**
     * Recomputes `exceeds_public_depth` of every report (after a tolerance change, say), then
     * the days a load left pending: the walk over every report skips rows a writer holds.
     */
    async recomputeFlags() {
      const all = await recomputePublicDepthFlags(stores);
      const pending = await recomputePendingDepthFlags(stores);
      return { changed: all.changed + pending.changed, batches: all.batches + pending.batches };
    },
  };
}

/**
 * The depth=true tickers of each exchange's coins. An exchange CoinGecko no longer knows (404:
 * renamed or closed) is skipped with a warning; the others are still recorded.
 */
async function depthTickers(
  client: CoinGeckoClient,
  coinsByExchange: Map<string, Set<string>>,
  query: SyncOptions,
) {
  const tickers: Array<{ exchangeId: string; ticker: CoinGeckoTicker }> = [];
  const warnings: string[] = [];
  let done = 0;
  for (const [exchangeId, coins] of coinsByExchange) {
    try {
      const page = await client.allExchangeTickers(exchangeId, {
        coinIds: [...coins],
        depth: true,
      });
      for (const ticker of page.tickers) tickers.push({ exchangeId, ticker });
      warnings.push(...page.skipped);
    } catch (error) {
      if (!(error instanceof CoinGeckoError) || error.status !== 404) throw error;
      warnings.push(`exchange '${exchangeId}' skipped: ${error.message}`);
    }
    query.onProgress?.(++done, coinsByExchange.size, `tickers ${exchangeId}`);
  }
  return { tickers, warnings };
}

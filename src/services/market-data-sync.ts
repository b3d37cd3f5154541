import type { CoinGeckoClient } from "../adapters/coingecko-client.js";
import type {
  CoinGeckoCoin,
  CoinGeckoDerivativeTicker,
  CoinGeckoTicker,
} from "../adapters/coingecko-schemas.js";
import type { ReferenceSnapshot } from "../domain/reference-data.js";
import type { Fixture } from "../schemas/fixture.js";
import { buildExchanges, groupExchanges, type NamedExchange } from "./exchange-groups.js";
import { type FittedSync, fitToStored } from "./market-data-fit.js";
import { dedupeMarkets, derivativeMarkets, spotMarket } from "./market-pairs.js";

/** Coins, exchanges and markets in the fixture format (CONTRACT.md section 3). */
export type ReferenceDataSet = Pick<Fixture, "coins" | "exchanges" | "markets">;
export type ReferenceMarket = ReferenceDataSet["markets"][number];

export type ExistingMarket = Pick<
  ReferenceMarket,
  "exchangeId" | "baseCoinId" | "quoteSymbol" | "instrumentType" | "collectedSince"
>;

export type MarketDataSyncDeps = {
  client: Pick<
    CoinGeckoClient,
    | "coinsList"
    | "exchangesList"
    | "allExchangeTickers"
    | "derivativesExchangesList"
    | "derivativesExchange"
  >;
  /** The project coins to collect pairs for (CoinGecko coin ids). */
  coinIds: string[];
  /**
   * The exchanges (spot or derivatives CoinGecko ids) to fetch tickers for. CoinGecko lists
   * hundreds of exchanges and the public API allows a few dozen calls a minute, so operators
   * should pass a subset; a caller without one should pass the exchanges already in the
   * database. Omitted: every exchange CoinGecko lists.
   */
  exchangeIds?: string[];
  /** YYYY-MM-DD, the `collectedSince` of markets seen for the first time. */
  today: string;
  /** `total` grows once the exchange lists are known. */
  onProgress?: (done: number, total: number, label: string) => void;
  /**
   * Loads the data set `dataOf` makes of the reference data stored, read under the load's lock
   * (see fitToStored); it may call `dataOf` again when its transaction is retried.
   */
  applyReferenceData: (dataOf: (stored: ReferenceSnapshot) => ReferenceDataSet) => Promise<void>;
};

export type MarketDataSyncResult = ReferenceDataSet & {
  /** The spot tickers fetched (with depth=true): the day's public depth of the markets. */
  spotTickers: Tickers["spot"];
  /** The markets of `markets` that were not stored. */
  newMarkets: ReferenceMarket[];
  /** Entries left out or kept as stored (see fitToStored), tickers skipped, one line each. */
  warnings: string[];
  /** Requested coins CoinGecko does not know. */
  unknownCoinIds: string[];
  /** Requested exchanges in neither CoinGecko exchange list. */
  unknownExchangeIds: string[];
};

type Tickers = {
  spot: Array<{ exchangeId: string; ticker: CoinGeckoTicker }>;
  perp: Array<{ exchangeId: string; ticker: CoinGeckoDerivativeTicker }>;
  skipped: string[];
};

/**
 * Fetches coins, exchanges and markets from CoinGecko, hands them to `applyReferenceData` and
 * returns them. Requests run one after another: the public API is rate limited, and the client
 * retries 429s.
 */
export async function syncMarketData(deps: MarketDataSyncDeps): Promise<MarketDataSyncResult> {
  const { client } = deps;
  const progress = { total: 3, done: 0 };
  const step = (label: string) => deps.onProgress?.(++progress.done, progress.total, label);

  const allCoins = await client.coinsList();
  step("coins list");
  const spotList = await client.exchangesList();
  step("exchanges list");
  const derivativesList = await client.derivativesExchangesList();
  step("derivatives exchanges list");

  const coinsById = new Map(allCoins.map((coin) => [coin.id, coin]));
  const requested = unique(deps.coinIds);
  const baseCoins = requested.flatMap((id) => coinsById.get(id) ?? []);
  const unknownCoinIds = requested.filter((id) => !coinsById.has(id));

  const wanted = deps.exchangeIds ? new Set(deps.exchangeIds) : undefined;
  const inScope = (exchange: NamedExchange) => !wanted || wanted.has(exchange.id);
  const spotExchanges = spotList.filter(inScope);
  const derivativesExchanges = derivativesList.filter(inScope);
  const known = new Set([...spotList, ...derivativesList].map((exchange) => exchange.id));
  const unknownExchangeIds = unique(deps.exchangeIds ?? []).filter((id) => !known.has(id));

  progress.total += spotExchanges.length + derivativesExchanges.length + 1;
  const baseCoinIds = baseCoins.map((coin) => coin.id);
  const tickers = await fetchTickers(client, spotExchanges, derivativesExchanges, {
    baseCoinIds,
    step,
  });
  const found = [
    ...tickers.spot.flatMap(({ exchangeId, ticker }) =>
      spotMarket(exchangeId, ticker, new Set(baseCoinIds), coinsById),
    ),
    ...derivativeMarkets(tickers.perp, baseCoins, tickers.spot, coinsById),
  ];
  const markets = dedupeMarkets(found).map((m) => ({ ...m, collectedSince: deps.today }));

  const groups = groupExchanges(spotList, derivativesList);
  const data: ReferenceDataSet = {
    coins: coinsOf(baseCoinIds, markets, coinsById),
    exchanges: buildExchanges(spotExchanges, derivativesExchanges, groups),
    markets,
  };
  let fitted: FittedSync | undefined;
  await deps.applyReferenceData((stored) => {
    fitted = fitToStored(data, groups, stored);
    return fitted.data;
  });
  step("apply reference data");
  const { newMarkets, warnings } = fitted ?? { newMarkets: [], warnings: [] };
  return {
    ...(fitted?.data ?? data),
    newMarkets,
    warnings: [...tickers.skipped, ...warnings],
    unknownCoinIds,
    unknownExchangeIds,
    spotTickers: tickers.spot,
  };
}

/** The tickers of the requested base coins on each exchange in scope. */
async function fetchTickers(
  client: MarketDataSyncDeps["client"],
  spotExchanges: NamedExchange[],
  derivativesExchanges: NamedExchange[],
  run: { baseCoinIds: string[]; step: (label: string) => void },
): Promise<Tickers> {
  const { baseCoinIds, step } = run;
  const result: Tickers = { spot: [], perp: [], skipped: [] };
  const none = { tickers: [], skipped: [] };
  for (const exchange of spotExchanges) {
    const { tickers, skipped } =
      baseCoinIds.length > 0
        ? await client.allExchangeTickers(exchange.id, { coinIds: baseCoinIds, depth: true })
        : none;
    for (const ticker of tickers) result.spot.push({ exchangeId: exchange.id, ticker });
    result.skipped.push(...skipped);
    step(`tickers ${exchange.id}`);
  }
  for (const exchange of derivativesExchanges) {
    const { tickers, skipped } =
      baseCoinIds.length > 0 ? await client.derivativesExchange(exchange.id) : none;
    for (const ticker of tickers) result.perp.push({ exchangeId: exchange.id, ticker });
    result.skipped.push(...skipped);
    step(`derivatives ${exchange.id}`);
  }
  return result;
}

/** The base coins and the quote coins of the markets found, as reference coins. */
function coinsOf(
  baseCoinIds: string[],
  markets: ReferenceMarket[],
  coinsById: Map<string, CoinGeckoCoin>,
): ReferenceDataSet["coins"] {
  const coinIds = new Set(baseCoinIds);
  for (const market of markets) if (market.quoteCoinId) coinIds.add(market.quoteCoinId);
  return [...coinIds].flatMap((id) => {
    const coin = coinsById.get(id);
    return coin ? [{ id: coin.id, symbol: coin.symbol.toUpperCase(), name: coin.name }] : [];
  });
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

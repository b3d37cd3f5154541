import type {
  CoinGeckoCoin,
  CoinGeckoDerivativeTicker,
  CoinGeckoTicker,
} from "../adapters/coingecko-schemas.js";
import type { ExistingMarket, ReferenceMarket } from "./market-data-sync.js";

/** Markets found in CoinGecko tickers, before their `collectedSince` is known. */
type FoundMarket = Omit<ReferenceMarket, "collectedSince">;

export function spotMarket(
  exchangeId: string,
  ticker: CoinGeckoTicker,
  baseCoinIds: Set<string>,
  coinsById: Map<string, CoinGeckoCoin>,
): FoundMarket[] {
  // A stale ticker is a pair the exchange no longer trades.
  if (!ticker.coin_id || !baseCoinIds.has(ticker.coin_id) || ticker.is_stale) return [];
  const quote = ticker.target_coin_id ? coinsById.get(ticker.target_coin_id) : undefined;
  // DEX tickers name their quote by contract address; the coin's symbol is what users submit.
  const quoteSymbol = (
    quote && /^0x[0-9a-f]{40}$/i.test(ticker.target) ? quote.symbol : ticker.target
  ).toUpperCase();
  return [
    {
      exchangeId,
      baseCoinId: ticker.coin_id,
      ...(quote ? { quoteCoinId: quote.id } : {}),
      quoteSymbol,
      instrumentType: "spot",
    },
  ];
}

/**
 * Perpetuals of the requested coins. Derivatives tickers name their coins by symbol, so the base
 * is matched against the requested coins' symbols (a symbol two requested coins share matches
 * neither), and the quote coin is the one spot tickers of this run give that quote symbol.
 */
export function derivativeMarkets(
  tickers: Array<{ exchangeId: string; ticker: CoinGeckoDerivativeTicker }>,
  baseCoins: CoinGeckoCoin[],
  spotTickers: Array<{ ticker: CoinGeckoTicker }>,
  coinsById: Map<string, CoinGeckoCoin>,
): FoundMarket[] {
  const baseBySymbol = uniqueBySymbol(
    baseCoins.map((coin) => [coin.symbol.toUpperCase(), coin.id]),
  );
  const quoteBySymbol = uniqueBySymbol(
    spotTickers.flatMap(({ ticker }) =>
      ticker.target_coin_id && coinsById.has(ticker.target_coin_id)
        ? [[ticker.target.toUpperCase(), ticker.target_coin_id] as const]
        : [],
    ),
  );
  const baseIds = new Set(baseCoins.map((coin) => coin.id));
  return tickers.flatMap(({ exchangeId, ticker }) => {
    if (ticker.contract_type !== "perpetual" || !ticker.base || !ticker.target) return [];
    const quoteSymbol = ticker.target.toUpperCase();
    const baseCoinId =
      ticker.coin_id && baseIds.has(ticker.coin_id)
        ? ticker.coin_id
        : baseBySymbol.get(ticker.base.toUpperCase());
    if (!baseCoinId) return [];
    const quoteCoinId =
      ticker.target_coin_id && coinsById.has(ticker.target_coin_id)
        ? ticker.target_coin_id
        : quoteBySymbol.get(quoteSymbol);
    return [
      {
        exchangeId,
        baseCoinId,
        ...(quoteCoinId ? { quoteCoinId } : {}),
        quoteSymbol,
        instrumentType: "perp" as const,
      },
    ];
  });
}

/** Symbol -> coin id, leaving out symbols that name more than one coin. */
function uniqueBySymbol(pairs: ReadonlyArray<readonly [string, string]>): Map<string, string> {
  const ids = new Map<string, Set<string>>();
  for (const [symbol, id] of pairs) ids.set(symbol, (ids.get(symbol) ?? new Set()).add(id));
  const result = new Map<string, string>();
  for (const [symbol, set] of ids) {
    const [only] = set;
    if (set.size === 1 && only) result.set(symbol, only);
  }
  return result;
}

export function marketKey(market: Omit<ExistingMarket, "collectedSince">): string {
  return JSON.stringify([
    market.exchangeId,
    market.baseCoinId,
    market.quoteSymbol.toUpperCase(),
    market.instrumentType,
  ]);
}

/** One market per key; a ticker that names the quote coin wins over one that does not. */
export function dedupeMarkets<T extends FoundMarket>(markets: T[]): T[] {
  const byKey = new Map<string, T>();
  for (const market of markets) {
    const key = marketKey(market);
    const seen = byKey.get(key);
    if (!seen || (!seen.quoteCoinId && market.quoteCoinId)) byKey.set(key, market);
  }
  return [...byKey.values()];
}

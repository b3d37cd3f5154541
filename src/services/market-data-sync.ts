import type {
  CoinGeckoClient,
  CoinGeckoCoin,
  CoinGeckoDerivativeTicker,
  CoinGeckoTicker,
} from "../adapters/coingecko-client.js";
import type { Fixture } from "../schemas/fixture.js";

/** Coins, exchanges and markets in the fixture format (CONTRACT.md section 3). */
export type ReferenceDataSet = Pick<Fixture, "coins" | "exchanges" | "markets">;
export type ReferenceExchange = ReferenceDataSet["exchanges"][number];
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
  existingMarkets: ExistingMarket[];
  /** `total` grows once the exchange lists are known. */
  onProgress?: (done: number, total: number, label: string) => void;
  applyReferenceData: (data: ReferenceDataSet) => Promise<void>;
};

export type MarketDataSyncResult = ReferenceDataSet & {
  /** The markets of `markets` that were not in `existingMarkets`. */
  newMarkets: ReferenceMarket[];
  /** Requested coins CoinGecko does not know. */
  unknownCoinIds: string[];
  /** Requested exchanges in neither CoinGecko exchange list. */
  unknownExchangeIds: string[];
};

type NamedExchange = { id: string; name: string };

/**
 * Fetches coins, exchanges and markets from CoinGecko, hands them to `applyReferenceData` and
 * returns them. Requests run one after another: the public API is rate limited, and the client
 * retries 429s.
 */
export async function syncMarketData(deps: MarketDataSyncDeps): Promise<MarketDataSyncResult> {
  const { client } = deps;
  let total = 3;
  let done = 0;
  const step = (label: string) => deps.onProgress?.(++done, total, label);

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

  total += spotExchanges.length + derivativesExchanges.length + 1;
  const baseCoinIds = baseCoins.map((coin) => coin.id);
  const spotTickers: Array<{ exchangeId: string; ticker: CoinGeckoTicker }> = [];
  for (const exchange of spotExchanges) {
    const tickers =
      baseCoinIds.length > 0
        ? await client.allExchangeTickers(exchange.id, { coinIds: baseCoinIds })
        : [];
    for (const ticker of tickers) spotTickers.push({ exchangeId: exchange.id, ticker });
    step(`tickers ${exchange.id}`);
  }
  const perpTickers: Array<{ exchangeId: string; ticker: CoinGeckoDerivativeTicker }> = [];
  for (const exchange of derivativesExchanges) {
    const { tickers } =
      baseCoinIds.length > 0 ? await client.derivativesExchange(exchange.id) : { tickers: [] };
    for (const ticker of tickers) perpTickers.push({ exchangeId: exchange.id, ticker });
    step(`derivatives ${exchange.id}`);
  }

  const found = [
    ...spotTickers.flatMap(({ exchangeId, ticker }) =>
      spotMarket(exchangeId, ticker, new Set(baseCoinIds), coinsById),
    ),
    ...derivativeMarkets(perpTickers, baseCoins, spotTickers, coinsById),
  ];
  const existingKeys = new Set(deps.existingMarkets.map(marketKey));
  const markets = withCollectedSince(dedupeMarkets(found), deps.existingMarkets, deps.today);
  const newMarkets = markets.filter((market) => !existingKeys.has(marketKey(market)));

  const coinIds = new Set(baseCoinIds);
  for (const market of markets) if (market.quoteCoinId) coinIds.add(market.quoteCoinId);
  const coins = [...coinIds].flatMap((id) => {
    const coin = coinsById.get(id);
    return coin ? [{ id: coin.id, symbol: coin.symbol.toUpperCase(), name: coin.name }] : [];
  });

  const groups = groupExchanges(spotList, derivativesList);
  const exchanges = buildExchanges(spotExchanges, derivativesExchanges, groups);

  const data: ReferenceDataSet = { coins, exchanges, markets };
  await deps.applyReferenceData(data);
  step("apply reference data");
  return { ...data, newMarkets, unknownCoinIds, unknownExchangeIds };
}

/**
 * Venue families: maps every exchange id to its group. A derivatives exchange joins the spot
 * exchange whose name starts with the same brand ("Binance (Futures)" joins "Binance", "Bybit"
 * joins "Bybit (Spot)"); the group id is the spot exchange's id. Spot exchanges are never
 * grouped with each other ("Binance US" is not Binance), and an exchange without a family is
 * its own group.
 */
export function groupExchanges(
  spot: NamedExchange[],
  derivatives: NamedExchange[],
): Map<string, string> {
  const groups = new Map<string, string>();
  const spotByBrand = new Map<string, NamedExchange[]>();
  for (const exchange of spot) {
    groups.set(exchange.id, exchange.id);
    const brand = exchangeBrand(exchange.name);
    if (brand) spotByBrand.set(brand, [...(spotByBrand.get(brand) ?? []), exchange]);
  }
  for (const exchange of derivatives) {
    if (groups.has(exchange.id)) continue; // one venue listed as both spot and derivatives
    const brand = exchangeBrand(exchange.name);
    const candidates = brand ? spotByBrand.get(brand) : undefined;
    const family = candidates && brand ? flagshipExchange(brand, candidates) : undefined;
    groups.set(exchange.id, family?.id ?? exchange.id);
  }
  return groups;
}

/** "Gate.io (Futures)" -> "gate.io", "OKX" -> "okx", "Bybit (Spot)" -> "bybit". */
export function exchangeBrand(name: string): string {
  const withoutQualifiers = name.replace(/\([^)]*\)/g, " ").toLowerCase();
  return withoutQualifiers.trim().split(/\s+/)[0] ?? "";
}

/** Among spot exchanges of one brand, the one named just the brand ("Binance", not "Binance US"). */
function flagshipExchange(brand: string, candidates: NamedExchange[]): NamedExchange | undefined {
  const bare = (name: string) =>
    name
      .replace(/\([^)]*\)/g, " ")
      .toLowerCase()
      .replace(/\s+/g, " ")
      .trim();
  return (
    candidates.find((exchange) => bare(exchange.name) === brand) ??
    candidates.find((exchange) => exchange.id === brand) ??
    [...candidates].sort((a, b) => a.name.length - b.name.length || a.id.localeCompare(b.id))[0]
  );
}

function buildExchanges(
  spot: NamedExchange[],
  derivatives: NamedExchange[],
  groups: Map<string, string>,
): ReferenceExchange[] {
  const byId = new Map<string, ReferenceExchange>();
  const add = (exchange: NamedExchange, kind: "spot" | "derivatives") => {
    const entry = byId.get(exchange.id) ?? {
      id: exchange.id,
      name: exchange.name,
      spot: false,
      derivatives: false,
      marketData: true,
      group: groups.get(exchange.id) ?? exchange.id,
    };
    entry[kind] = true;
    byId.set(exchange.id, entry);
  };
  for (const exchange of spot) add(exchange, "spot");
  for (const exchange of derivatives) add(exchange, "derivatives");
  return [...byId.values()];
}

function spotMarket(
  exchangeId: string,
  ticker: CoinGeckoTicker,
  baseCoinIds: Set<string>,
  coinsById: Map<string, CoinGeckoCoin>,
): Omit<ReferenceMarket, "collectedSince">[] {
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
function derivativeMarkets(
  tickers: Array<{ exchangeId: string; ticker: CoinGeckoDerivativeTicker }>,
  baseCoins: CoinGeckoCoin[],
  spotTickers: Array<{ ticker: CoinGeckoTicker }>,
  coinsById: Map<string, CoinGeckoCoin>,
): Omit<ReferenceMarket, "collectedSince">[] {
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

function marketKey(market: Omit<ExistingMarket, "collectedSince">): string {
  return JSON.stringify([
    market.exchangeId,
    market.baseCoinId,
    market.quoteSymbol.toUpperCase(),
    market.instrumentType,
  ]);
}

/** One market per key; a ticker that names the quote coin wins over one that does not. */
function dedupeMarkets<T extends Omit<ReferenceMarket, "collectedSince">>(markets: T[]): T[] {
  const byKey = new Map<string, T>();
  for (const market of markets) {
    const key = marketKey(market);
    const seen = byKey.get(key);
    if (!seen || (!seen.quoteCoinId && market.quoteCoinId)) byKey.set(key, market);
  }
  return [...byKey.values()];
}

function withCollectedSince(
  markets: Omit<ReferenceMarket, "collectedSince">[],
  existing: ExistingMarket[],
  today: string,
): ReferenceMarket[] {
  const since = new Map(existing.map((market) => [marketKey(market), market.collectedSince]));
  return markets.map((market) => ({
    ...market,
    collectedSince: since.get(marketKey(market)) ?? today,
  }));
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

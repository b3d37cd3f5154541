import type { CoinGeckoTicker } from "../adapters/coingecko-schemas.js";
import { utcDate } from "../domain/dates.js";
import type { MarketDay, PublicDepthSnapshot } from "../domain/quality.js";
import type { Market } from "../domain/reference-data.js";
import type { Stores } from "../store/stores.js";
import { recomputePendingDepthFlags } from "./quality-recompute.js";

type MarketOf = Pick<Market, "exchangeId" | "baseCoinId" | "quoteSymbol" | "instrumentType"> & {
  quoteCoinId?: string | null;
};

/**
 * The public depth snapshots of the spot tickers that are markets we know: a ticker is matched
 * by exchange, base coin and quote symbol, unless the market of that symbol names another quote
 * coin; else by quote coin when one market alone has it (DEX tickers name their quote by contract
 * address). One coin may be quoted under two symbols (USDT and USDT.E are both tether): matching
 * by coin first gave both tickers to one market. Stale tickers (pairs no longer traded) and
 * tickers without any of the four figures give none. A snapshot is taken when CoinGecko last
 * fetched the ticker, else (no time, or one after `now`) at `now`.
 */
export function depthSnapshotsOf(
  tickers: Array<{ exchangeId: string; ticker: CoinGeckoTicker }>,
  markets: MarketOf[],
  now: Date,
): PublicDepthSnapshot[] {
  const marketOf = tickerMarkets(markets);
  return tickers.flatMap(({ exchangeId, ticker }) => {
    if (!ticker.coin_id || ticker.is_stale) return [];
    const market = marketOf(exchangeId, ticker);
    if (!market) return [];
    const figures = {
      costToMoveUpUsd: ticker.cost_to_move_up_usd ?? null,
      costToMoveDownUsd: ticker.cost_to_move_down_usd ?? null,
      bidAskSpreadPercentage: ticker.bid_ask_spread_percentage ?? null,
      volumeUsd: ticker.converted_volume?.usd ?? null,
    };
    if (Object.values(figures).every((value) => value === null)) return [];
    const takenAt = fetchedAt(ticker.last_fetch_at, now) ?? now;
    return [
      {
        exchangeId,
        baseCoinId: market.baseCoinId,
        instrumentType: "spot" as const,
        quoteSymbol: market.quoteSymbol,
        quoteCoinId: market.quoteCoinId ?? null,
        date: utcDate(takenAt),
        takenAt,
        ...figures,
        source: "coingecko" as const,
      },
    ];
  });
}

/** Finds the spot market of a ticker (see depthSnapshotsOf). */
function tickerMarkets(markets: MarketOf[]) {
  const bySymbol = new Map<string, MarketOf>();
  const byCoin = new Map<string, MarketOf[]>();
  for (const m of markets) {
    if (m.instrumentType !== "spot") continue;
    bySymbol.set(`${m.exchangeId}|${m.baseCoinId}|${m.quoteSymbol}`, m);
    if (!m.quoteCoinId) continue;
    const key = `${m.exchangeId}|${m.baseCoinId}|${m.quoteCoinId}`;
    byCoin.set(key, [...(byCoin.get(key) ?? []), m]);
  }
  return (exchangeId: string, ticker: CoinGeckoTicker): MarketOf | undefined => {
    const prefix = `${exchangeId}|${ticker.coin_id}`;
    const coinId = ticker.target_coin_id;
    const named = bySymbol.get(`${prefix}|${ticker.target.toUpperCase()}`);
    if (named && (!coinId || !named.quoteCoinId || named.quoteCoinId === coinId)) return named;
    const ofCoin = coinId ? (byCoin.get(`${prefix}|${coinId}`) ?? []) : [];
    return ofCoin.length === 1 ? ofCoin[0] : undefined;
  };
}

/** CoinGecko's fetch time of a ticker; none when unreadable or after `now` (not believed). */
function fetchedAt(text: string | null | undefined, now: Date): Date | undefined {
  if (!text) return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) || date > now ? undefined : date;
}

export type SnapshotSummary = { snapshots: number; daysChanged: number; flagsChanged: number };

/**
 * Keeps the snapshots, then recomputes `exceeds_public_depth` for the reports of every market
 * and day whose public depth changed (a snapshot may arrive after the reports it checks), and
 * of any an earlier load left pending.
 */
export async function recordDepthSnapshots(
  stores: Pick<Stores, "qualityDepth">,
  snapshots: PublicDepthSnapshot[],
): Promise<SnapshotSummary> {
  const days: MarketDay[] = await stores.qualityDepth.record(snapshots);
  const { changed } = await recomputePendingDepthFlags(stores);
  return { snapshots: snapshots.length, daysChanged: days.length, flagsChanged: changed };
}

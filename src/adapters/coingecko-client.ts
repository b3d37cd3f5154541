import { z } from "zod";
import { sleep as defaultSleep } from "../retry.js";
import { createGet, type RetryInfo } from "./coingecko-http.js";
import {
  type CoinGeckoCoin,
  type CoinGeckoDerivativesExchange,
  type CoinGeckoExchange,
  type CoinGeckoTicker,
  coinSchema,
  derivativesExchangeSchema,
  derivativeTickerSchema,
  entriesOf,
  exchangeSchema,
  exchangeTickersSchema,
  tickerName,
  tickerSchema,
} from "./coingecko-schemas.js";

export type { RetryInfo } from "./coingecko-http.js";

export const COINGECKO_PUBLIC_BASE_URL = "https://api.coingecko.com/api/v3";
export const COINGECKO_PRO_BASE_URL = "https://pro-api.coingecko.com/api/v3";

/** CoinGecko pages exchange tickers by 100; a shorter page is the last one. */
export const TICKERS_PAGE_SIZE = 100;

export type CoinGeckoClientOptions = {
  /** Default: the public API, or the pro API when `keyType` is "pro". */
  baseUrl?: string;
  apiKey?: string;
  /** Which header carries `apiKey`. Default "demo". */
  keyType?: "demo" | "pro";
  fetch?: typeof fetch;
  /** Retries after the first attempt, for 429, 5xx and network errors. Default 5. */
  maxRetries?: number;
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (info: RetryInfo) => void;
  /** Per attempt. Default 30 s. */
  timeoutMs?: number;
  /** A response body above this fails the request. Default 64 MiB. */
  maxBodyBytes?: number;
};

export type CoinGeckoClient = {
  coinsList(): Promise<CoinGeckoCoin[]>;
  exchangesList(): Promise<CoinGeckoExchange[]>;
  /**
   * One page (1-based) of an exchange's tickers whose base coin is one of `coinIds`; with
   * `depth`, each with the cost to move its price 2 % up and down.
   */
  exchangeTickers(
    exchangeId: string,
    query: { coinIds: string[]; page: number; depth?: boolean },
  ): Promise<Tickers>;
  /**
   * Every page of `exchangeTickers`, until a page has fewer than 100 tickers (or 100 pages,
   * with a warning in `skipped`).
   */
  allExchangeTickers(
    exchangeId: string,
    query: { coinIds: string[]; depth?: boolean },
  ): Promise<Tickers>;
  derivativesExchangesList(): Promise<CoinGeckoExchange[]>;
  /** A derivatives exchange with its unexpired tickers. */
  derivativesExchange(exchangeId: string): Promise<CoinGeckoDerivativesExchange>;
};

/** The tickers, and a line for each one skipped (see entriesOf). */
export type Tickers = { tickers: CoinGeckoTicker[]; skipped: string[] };

// Guards against an API that ignores `page` and keeps returning full pages.
const MAX_TICKER_PAGES = 100;

export function createCoinGeckoClient(options: CoinGeckoClientOptions = {}): CoinGeckoClient {
  const keyType = options.keyType ?? "demo";
  const baseUrl = (
    options.baseUrl ?? (keyType === "pro" ? COINGECKO_PRO_BASE_URL : COINGECKO_PUBLIC_BASE_URL)
  ).replace(/\/+$/, "");
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.apiKey) {
    headers[keyType === "pro" ? "x-cg-pro-api-key" : "x-cg-demo-api-key"] = options.apiKey;
  }
  const get = createGet({
    baseUrl,
    headers,
    fetch: options.fetch ?? globalThis.fetch,
    maxRetries: options.maxRetries ?? 5,
    sleep: options.sleep ?? defaultSleep,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxBodyBytes: options.maxBodyBytes ?? 64 * 1024 * 1024,
    onRetry: options.onRetry,
  });

  async function exchangeTickers(
    exchangeId: string,
    query: { coinIds: string[]; page: number; depth?: boolean },
  ) {
    const params: Record<string, string> = { page: String(query.page) };
    if (query.depth) params.depth = "true";
    if (query.coinIds.length > 0) params.coin_ids = query.coinIds.join(",");
    const path = `/exchanges/${encodeURIComponent(exchangeId)}/tickers`;
    const { tickers } = await get(path, params, exchangeTickersSchema);
    const { entries, skipped } = entriesOf(tickers, tickerSchema, (entry) =>
      tickerName(exchangeId, entry),
    );
    return { tickers: entries, skipped };
  }

  return {
    coinsList: () => get("/coins/list", {}, z.array(coinSchema)),
    exchangesList: () => get("/exchanges/list", {}, z.array(exchangeSchema)),
    exchangeTickers,
    async allExchangeTickers(exchangeId, query) {
      const all: Tickers = { tickers: [], skipped: [] };
      for (let page = 1; ; page++) {
        const { tickers, skipped } = await exchangeTickers(exchangeId, { ...query, page });
        all.tickers.push(...tickers);
        all.skipped.push(...skipped);
        if (tickers.length + skipped.length < TICKERS_PAGE_SIZE) return all;
        if (page === MAX_TICKER_PAGES) {
          all.skipped.push(
            `tickers of ${exchangeId}: stopped after ${MAX_TICKER_PAGES} full pages; later pages skipped`,
          );
          return all;
        }
      }
    },
    derivativesExchangesList: () => get("/derivatives/exchanges/list", {}, z.array(exchangeSchema)),
    async derivativesExchange(exchangeId) {
      const path = `/derivatives/exchanges/${encodeURIComponent(exchangeId)}`;
      const data = await get(path, { include_tickers: "unexpired" }, derivativesExchangeSchema);
      const { entries, skipped } = entriesOf(data.tickers ?? [], derivativeTickerSchema, (entry) =>
        tickerName(exchangeId, entry),
      );
      return { name: data.name, tickers: entries, skipped };
    },
  };
}

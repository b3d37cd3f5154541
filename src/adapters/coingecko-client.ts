import { z } from "zod";
import { backoffMs, sleep as defaultSleep, retryAfterMs } from "../retry.js";

export const COINGECKO_PUBLIC_BASE_URL = "https://api.coingecko.com/api/v3";
export const COINGECKO_PRO_BASE_URL = "https://pro-api.coingecko.com/api/v3";

/** CoinGecko pages exchange tickers by 100; a shorter page is the last one. */
export const TICKERS_PAGE_SIZE = 100;

// The schemas name only the fields the sync reads and let everything else through, so that a
// field CoinGecko adds, drops or changes elsewhere in a response never breaks the sync.
const coinSchema = z.looseObject({ id: z.string(), symbol: z.string(), name: z.string() });
const exchangeSchema = z.looseObject({ id: z.string(), name: z.string() });

const tickerSchema = z.looseObject({
  base: z.string(),
  target: z.string(),
  coin_id: z.string().nullish(),
  // Absent (or null) when the quote is a fiat currency.
  target_coin_id: z.string().nullish(),
  market: z.looseObject({ identifier: z.string(), name: z.string() }).nullish(),
  is_stale: z.boolean().nullish(),
});
const exchangeTickersSchema = z.looseObject({
  name: z.string().nullish(),
  tickers: z.array(tickerSchema),
});

const derivativeTickerSchema = z.looseObject({
  symbol: z.string(),
  base: z.string().nullish(),
  target: z.string().nullish(),
  // "perpetual" or "futures" today; kept a string so a new contract type is skipped by the
  // sync rather than failing the whole response.
  contract_type: z.string().nullish(),
  expired_at: z.union([z.number(), z.string()]).nullish(),
  coin_id: z.string().nullish(),
  target_coin_id: z.string().nullish(),
});
const derivativesExchangeSchema = z.looseObject({
  name: z.string(),
  tickers: z.array(derivativeTickerSchema).nullish(),
});

export type CoinGeckoCoin = z.infer<typeof coinSchema>;
export type CoinGeckoExchange = z.infer<typeof exchangeSchema>;
export type CoinGeckoTicker = z.infer<typeof tickerSchema>;
export type CoinGeckoDerivativeTicker = z.infer<typeof derivativeTickerSchema>;
export type CoinGeckoDerivativesExchange = {
  name: string;
  tickers: CoinGeckoDerivativeTicker[];
};

export type RetryInfo = {
  url: string;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  status?: number;
  error?: string;
};

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
};

export type CoinGeckoClient = {
  coinsList(): Promise<CoinGeckoCoin[]>;
  exchangesList(): Promise<CoinGeckoExchange[]>;
  /** One page (1-based) of an exchange's tickers whose base coin is one of `coinIds`. */
  exchangeTickers(
    exchangeId: string,
    query: { coinIds: string[]; page: number },
  ): Promise<CoinGeckoTicker[]>;
  /** Every page of `exchangeTickers`, until a page has fewer than 100 tickers. */
  allExchangeTickers(exchangeId: string, query: { coinIds: string[] }): Promise<CoinGeckoTicker[]>;
  derivativesExchangesList(): Promise<CoinGeckoExchange[]>;
  /** A derivatives exchange with its unexpired tickers. */
  derivativesExchange(exchangeId: string): Promise<CoinGeckoDerivativesExchange>;
};

export class CoinGeckoError extends Error {
  override readonly name = "CoinGeckoError";
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 30_000;
// A Retry-After above this is not waited for blindly: a day-long ban should fail the sync.
const RETRY_AFTER_CAP_MS = 120_000;
// Guards against an API that ignores `page` and keeps returning full pages.
const MAX_TICKER_PAGES = 100;

/**
 * What went wrong below HTTP, in words an operator can act on: fetch itself only says
 * "fetch failed" and keeps the system error (its code) in `cause`.
 */
export function networkFailure(error: unknown, url: string, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms (timeout)`;
  }
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
  const host = URL.canParse(url) ? new URL(url).host : url;
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused by ${host} (ECONNREFUSED)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `DNS lookup of ${new URL(url).hostname} failed (${code})`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `connection to ${host} closed unexpectedly (${code})`;
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return `connecting to ${host} timed out (${code})`;
  }
  const detail = cause instanceof Error ? cause.message : "";
  const message = error instanceof Error ? error.message : String(error);
  return detail ? `${message}: ${detail}` : message;
}

export function createCoinGeckoClient(options: CoinGeckoClientOptions = {}): CoinGeckoClient {
  const keyType = options.keyType ?? "demo";
  const baseUrl = (
    options.baseUrl ?? (keyType === "pro" ? COINGECKO_PRO_BASE_URL : COINGECKO_PUBLIC_BASE_URL)
  ).replace(/\/+$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 5;
  const sleep = options.sleep ?? defaultSleep;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.apiKey) {
    headers[keyType === "pro" ? "x-cg-pro-api-key" : "x-cg-demo-api-key"] = options.apiKey;
  }

  async function get<T>(
    path: string,
    query: Record<string, string>,
    schema: z.ZodType<T>,
  ): Promise<T> {
    const search = new URLSearchParams(query).toString();
    const url = `${baseUrl}${path}${search ? `?${search}` : ""}`;
    const response = await fetchWithRetry(url);
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new CoinGeckoError(`CoinGecko ${path} returned a body that is not JSON`, url, 200, {
        cause: error,
      });
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join(".") : "(root)";
      throw new CoinGeckoError(
        `CoinGecko ${path} returned an unexpected response at ${where}: ${issue?.message ?? "invalid"}`,
        url,
        200,
      );
    }
    return parsed.data;
  }

  async function fetchWithRetry(url: string): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await doFetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        const reason = networkFailure(error, url, timeoutMs);
        if (attempt >= maxRetries) {
          const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : "";
          const message = `CoinGecko request to ${url} failed: ${reason}${tries}`;
          throw new CoinGeckoError(message, url, undefined, { cause: error });
        }
        const delayMs = backoff(attempt);
        options.onRetry?.({ url, attempt: attempt + 1, delayMs, error: reason });
        await sleep(delayMs);
        continue;
      }
      if (response.ok) return response;
      const retryable = response.status === 429 || response.status >= 500;
      // Drain the body so that the connection can be reused.
      const text = await response.text().catch(() => "");
      if (!retryable || attempt >= maxRetries) {
        const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : "";
        throw new CoinGeckoError(
          `CoinGecko request to ${url} failed with status ${response.status}${tries}${excerpt(text)}`,
          url,
          response.status,
        );
      }
      const delayMs =
        retryAfterMs(response.headers.get("retry-after"), RETRY_AFTER_CAP_MS) ?? backoff(attempt);
      options.onRetry?.({ url, attempt: attempt + 1, delayMs, status: response.status });
      await sleep(delayMs);
    }
  }

  async function exchangeTickers(exchangeId: string, query: { coinIds: string[]; page: number }) {
    const params: Record<string, string> = { page: String(query.page) };
    if (query.coinIds.length > 0) params.coin_ids = query.coinIds.join(",");
    const path = `/exchanges/${encodeURIComponent(exchangeId)}/tickers`;
    return (await get(path, params, exchangeTickersSchema)).tickers;
  }

  return {
    coinsList: () => get("/coins/list", {}, z.array(coinSchema)),
    exchangesList: () => get("/exchanges/list", {}, z.array(exchangeSchema)),
    exchangeTickers,
    async allExchangeTickers(exchangeId, query) {
      const tickers: CoinGeckoTicker[] = [];
      for (let page = 1; page <= MAX_TICKER_PAGES; page++) {
        const batch = await exchangeTickers(exchangeId, { coinIds: query.coinIds, page });
        tickers.push(...batch);
        if (batch.length < TICKERS_PAGE_SIZE) break;
      }
      return tickers;
    },
    derivativesExchangesList: () => get("/derivatives/exchanges/list", {}, z.array(exchangeSchema)),
    async derivativesExchange(exchangeId) {
      const path = `/derivatives/exchanges/${encodeURIComponent(exchangeId)}`;
      const data = await get(path, { include_tickers: "unexpired" }, derivativesExchangeSchema);
      return { name: data.name, tickers: data.tickers ?? [] };
    },
  };
}

function backoff(attempt: number): number {
  return backoffMs(attempt + 1, { baseMs: BACKOFF_BASE_MS, capMs: BACKOFF_CAP_MS });
}

function excerpt(text: string): string {
  const trimmed = text.trim().replace(/\s+/g, " ");
  if (!trimmed) return "";
  return `: ${trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed}`;
}

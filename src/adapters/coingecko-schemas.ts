import { z } from "zod";

// The schemas name only the fields the sync reads and let everything else through, so that a
// field CoinGecko adds, drops or changes elsewhere in a response never breaks the sync.
export const coinSchema = z.looseObject({ id: z.string(), symbol: z.string(), name: z.string() });
export const exchangeSchema = z.looseObject({ id: z.string(), name: z.string() });

export const tickerSchema = z.looseObject({
  base: z.string(),
  target: z.string(),
  coin_id: z.string().nullish(),
  // Absent (or null) when the quote is a fiat currency.
  target_coin_id: z.string().nullish(),
  market: z.looseObject({ identifier: z.string(), name: z.string() }).nullish(),
  is_stale: z.boolean().nullish(),
  // With depth=true (absent on older plans, and null where CoinGecko has no order book): the
  // USD it costs to move the price 2 % up or down.
  cost_to_move_up_usd: z.number().nonnegative().nullish(),
  cost_to_move_down_usd: z.number().nonnegative().nullish(),
  bid_ask_spread_percentage: z.number().nullish(),
  converted_volume: z.looseObject({ usd: z.number().nonnegative().nullish() }).nullish(),
  last_fetch_at: z.string().nullish(),
});
// Each ticker is checked on its own (entriesOf): one with an unexpected value is skipped with a
// warning, not the whole response.
export const exchangeTickersSchema = z.looseObject({
  name: z.string().nullish(),
  tickers: z.array(z.unknown()),
});

export const derivativeTickerSchema = z.looseObject({
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
export const derivativesExchangeSchema = z.looseObject({
  name: z.string(),
  tickers: z.array(z.unknown()).nullish(),
});

export type CoinGeckoCoin = z.infer<typeof coinSchema>;
export type CoinGeckoExchange = z.infer<typeof exchangeSchema>;
export type CoinGeckoTicker = z.infer<typeof tickerSchema>;
export type CoinGeckoDerivativeTicker = z.infer<typeof derivativeTickerSchema>;
export type CoinGeckoDerivativesExchange = {
  name: string;
  tickers: CoinGeckoDerivativeTicker[];
  /** The tickers skipped (see entriesOf), one line each. */
  skipped: string[];
};

/**
 * The entries `schema` accepts, and a line for each other one naming it (`describe`) and its
 * first problem: a value CoinGecko changed in one ticker skips that ticker, not the sync.
 */
export function entriesOf<T>(
  entries: unknown[],
  schema: z.ZodType<T>,
  describe: (entry: unknown) => string,
): { entries: T[]; skipped: string[] } {
  const result: { entries: T[]; skipped: string[] } = { entries: [], skipped: [] };
  for (const entry of entries) {
    const parsed = schema.safeParse(entry);
    if (parsed.success) result.entries.push(parsed.data);
    else {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join(".") : "(entry)";
      result.skipped.push(`${describe(entry)} skipped: ${where}: ${issue?.message ?? "invalid"}`);
    }
  }
  return result;
}

/** "ticker LINK/USDT (chainlink) on binance", from whatever of those the entry has. */
export function tickerName(exchangeId: string, entry: unknown): string {
  const field = (name: string) => {
    const value =
      typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>)[name] : "";
    return typeof value === "string" ? value.slice(0, 100) : "?";
  };
  const pair = field("symbol") !== "?" ? field("symbol") : `${field("base")}/${field("target")}`;
  return `ticker ${pair} (${field("coin_id")}) on ${exchangeId}`;
}

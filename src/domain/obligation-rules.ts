import type { EngagementPeriod } from "./engagement.js";
import type { ObligationMarket, ObligationPeriod } from "./obligation.js";
import { obligationsOverlap } from "./obligation.js";
import type { ReferenceData } from "./reference-data.js";
import { routeExchange } from "./routing.js";

/**
 * Why a period's market cannot be reported as stored, or undefined when it can: the exchange
 * must exist and support the instrument type (markets are named after routing, so a perp on
 * `binance` is refused with a pointer to `binance_futures`); on an exchange that collects
 * market data the pair must be a known market: a crypto quote by its coin id, a fiat quote by
 * its upper-case symbol, as record keys hold them.
 */
export function marketProblem(
  market: ObligationMarket,
  baseCoinId: string,
  ref: ReferenceData,
): string | undefined {
  const { exchangeId, quote, instrumentType } = market;
  const exchange = ref.exchanges.get(exchangeId);
  if (exchange === undefined) return `unknown exchange '${exchangeId}'`;
  const routed = routeExchange(exchange, instrumentType, ref);
  if ("problem" in routed) return routed.problem;
  if (routed.exchange.id !== exchange.id) {
    return `exchange '${exchangeId}' has no ${instrumentType} markets; its ${instrumentType} reports are stored under '${routed.exchange.id}': name that`;
  }
  const isCoin = ref.coins.has(quote);
  if (!isCoin && quote !== quote.toUpperCase()) {
    return `quote '${quote}' is not a coin id; a fiat symbol is written upper-case ('${quote.toUpperCase()}')`;
  }
  if (!exchange.marketData) return undefined;
  const markets = ref.marketsOf(exchangeId, baseCoinId, instrumentType);
  // A fiat market (no quote coin) is keyed by its symbol; a crypto one by its coin id.
  const known = markets.some(
    (m) => m.quoteCoinId === quote || (m.quoteCoinId === null && m.quoteSymbol === quote),
  );
  if (known) return undefined;
  const coin = markets.find((m) => m.quoteCoinId !== null && m.quoteSymbol === quote)?.quoteCoinId;
  return coin != null
    ? `quote '${quote}' is the coin '${coin}' on ${exchangeId}: name the coin id, as record keys do`
    : `unknown market: ${exchangeId} has no ${instrumentType} market ${baseCoinId}/${quote}`;
}

/** The engagement whose dates hold the whole period, if any. */
export function engagementHolding<E extends EngagementPeriod>(
  period: Pick<ObligationPeriod, "baseCoinId" | "since" | "until">,
  engagements: readonly E[],
): E | undefined {
  return engagements.find(
    (e) =>
      e.baseCoinId === period.baseCoinId &&
      e.since <= period.since &&
      (e.until === null || (period.until !== null && period.until <= e.until)),
  );
}

export function describeObligation(p: Pick<ObligationPeriod, "baseCoinId" | "since" | "until">) {
  return `obligation period for '${p.baseCoinId}' from ${p.since} to ${p.until ?? "open end"}`;
}

/** The first of `others` the period overlaps (same organization and coin, another `since`). */
export function overlappingPeriod<P extends ObligationPeriod>(
  period: ObligationPeriod,
  others: readonly P[],
): P | undefined {
  return others.find((other) => obligationsOverlap(period, other));
}

/** What a period becomes once engagements changed: ended earlier, or removed. */
export type PeriodFit<P> = { period: P; endsOn: string } | { period: P; removed: true };

/**
 * A period lies inside its engagement (CONTRACT section 4). When an engagement ends earlier
 * than its periods (ended, or its end moved back), each period that runs past the new end
 * ends on it, and each that starts after it is removed: no day of it is engaged any more.
 * Periods inside an engagement are left as they are.
 */
export function periodsOutsideEngagements<
  P extends Pick<ObligationPeriod, "baseCoinId" | "since" | "until">,
>(periods: readonly P[], engagements: readonly EngagementPeriod[]): PeriodFit<P>[] {
  return periods.flatMap((period): PeriodFit<P>[] => {
    if (engagementHolding(period, engagements) !== undefined) return [];
    // Engagements of a coin do not overlap: at most one holds the period's first day.
    const started = engagements.find(
      (e) =>
        e.baseCoinId === period.baseCoinId &&
        e.since <= period.since &&
        (e.until === null || period.since <= e.until),
    );
    return started?.until ? [{ period, endsOn: started.until }] : [{ period, removed: true }];
  });
}

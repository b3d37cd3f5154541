import { type Caller, readScope, scopeReads } from "../domain/caller.js";
import { NotFoundError } from "../domain/errors.js";
import { compliance } from "../domain/obligation.js";
import type { ObligationStore } from "../store/obligation-store.js";
import type { OrganizationStore } from "../store/organization-store.js";
import type { ScorecardCounts, ScorecardMedians } from "../store/scorecard-store.js";
import { engagedMakerName } from "./dashboard-scope.js";
import type { ReferenceDataCache } from "./reference-data.js";
import { getScorecardsWithMedians, type ScorecardDeps, scorecardRange } from "./scorecards.js";

/** The coin pages cover the scorecards' default 30 days unless asked, at most their 366. */
export const COIN_PAGE_DAYS = { defaultDays: 30, maxDays: 366 };

type Deps = ScorecardDeps & {
  organizations: OrganizationStore;
  obligations: ObligationStore;
  referenceData: ReferenceDataCache;
};

export type Coin = { id: string; symbol: string; name: string };

/** Medians of the reports the scorecards judged (null without any). */
export type Medians = {
  bidDepth200: number | null;
  askDepth200: number | null;
  bidAskSpread: number | null;
};

/** One market maker's obligation markets for a coin, together. */
export type MakerSummary = Medians & {
  organizationId: string;
  organizationName: string;
  markets: number;
  daysDue: number;
  daysMet: number;
  daysMissing: number;
  daysLate: number;
  /** Due reported days whose report carries a quality flag. */
  daysFlagged: number;
  compliance: number | null;
};

export type CoinPage = { coin: Coin; dateGte: string; dateLte: string; makers: MakerSummary[] };

export type MakerPage = {
  coin: Coin;
  dateGte: string;
  dateLte: string;
  maker: MakerSummary;
  markets: (ScorecardCounts & Medians)[];
};

/** The coins a caller's coin pages cover: a project's own, else those with obligations. */
export async function coinIndex(deps: Deps, caller: Caller): Promise<Coin[]> {
  const scope = readScope(caller);
  const ids =
    scope.kind === "coins"
      ? scope.baseCoinIds
      : (await deps.obligations.list(scope)).map((p) => p.baseCoinId);
  const ref = await deps.referenceData.current();
  return [...new Set(ids)].sort().map((id) => coinOf(ref.coins.get(id), id));
}

const coinOf = (coin: Coin | undefined, id: string): Coin =>
  coin === undefined ? { id, symbol: id, name: id } : { id, symbol: coin.symbol, name: coin.name };

/**
 * A coin's market makers side by side (issue 14): each one's obligation markets summed from
 * the scorecards (compliance over every due market-day), with the medians of the same reports.
 * A coin outside a project's scope is not found; a market maker sees itself only.
 */
export async function coinPage(
  deps: Deps,
  caller: Caller,
  baseCoinId: string,
  query: { dateGte?: string; dateLte?: string },
): Promise<CoinPage> {
  const scope = readScope(caller);
  if (!scopeReads(scope, caller.organizationId, baseCoinId))
    throw new NotFoundError("Coin not found");
  const range = scorecardRange(query, deps.now(), COIN_PAGE_DAYS);
  const filter = { baseCoinId, ...range };
  const [scorecards, ref] = await Promise.all([
    getScorecardsWithMedians(deps, scope, filter, { perMarket: false }),
    deps.referenceData.current(),
  ]);
  const { medians } = scorecards;
  // An operator reads every coin: one that neither the reference data nor any obligation
  // knows (a typo) is not found, as a coin outside a project's scope is.
  if (ref.coins.get(baseCoinId) === undefined && scorecards.items.length === 0)
    throw new NotFoundError("Coin not found");
  const organizations = [...new Set(scorecards.items.map((s) => s.organizationId))];
  const makers = organizations.map((id) =>
    summaryOf(
      scorecards.items.filter((s) => s.organizationId === id),
      medians.find((m) => m.organizationId === id && m.market === null),
    ),
  );
  return { coin: coinOf(ref.coins.get(baseCoinId), baseCoinId), ...range, makers };
}

/** The drill-down: one market maker's obligation markets for a coin, each with its medians. */
export async function makerPage(
  deps: Deps,
  caller: Caller,
  key: { organizationId: string; baseCoinId: string },
  query: { dateGte?: string; dateLte?: string },
): Promise<MakerPage> {
  const scope = readScope(caller);
  const organizationName = await engagedMakerName(deps, caller, key, "Market maker not found");
  const range = scorecardRange(query, deps.now(), COIN_PAGE_DAYS);
  const filter = { ...key, ...range };
  const [scorecards, ref] = await Promise.all([
    getScorecardsWithMedians(deps, scope, filter, { perMarket: true }),
    deps.referenceData.current(),
  ]);
  const { medians } = scorecards;
  const marketMedians = (s: ScorecardCounts) =>
    medians.find(
      (m) =>
        m.market?.exchangeId === s.exchangeId &&
        m.market.quote === s.quote &&
        m.market.instrumentType === s.instrumentType,
    );
  const maker = summaryOf(
    scorecards.items,
    medians.find((m) => m.market === null),
  );
  return {
    coin: coinOf(ref.coins.get(key.baseCoinId), key.baseCoinId),
    ...range,
    maker: { ...maker, organizationId: key.organizationId, organizationName },
    markets: scorecards.items.map((s) => ({ ...s, ...mediansOf(marketMedians(s)) })),
  };
}

function mediansOf(m: ScorecardMedians | undefined): Medians {
  return {
    bidDepth200: m?.bidDepth200 ?? null,
    askDepth200: m?.askDepth200 ?? null,
    bidAskSpread: m?.bidAskSpread ?? null,
  };
}

/** A market maker's scorecards summed (compliance over all its due market-days). */
function summaryOf(items: ScorecardCounts[], medians: ScorecardMedians | undefined): MakerSummary {
  const sum = (pick: (s: ScorecardCounts) => number) => items.reduce((n, s) => n + pick(s), 0);
  const daysDue = sum((s) => s.daysDue);
  const daysMet = sum((s) => s.daysMet);
  return {
    organizationId: items[0]?.organizationId ?? "",
    organizationName: items[0]?.organizationName ?? "",
    markets: items.length,
    daysDue,
    daysMet,
    daysMissing: sum((s) => s.daysMissing),
    daysLate: sum((s) => s.daysLate),
    daysFlagged: sum((s) => s.daysFlagged),
    compliance: compliance(daysMet, daysDue),
    ...mediansOf(medians),
  };
}

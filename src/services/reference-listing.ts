import { type Caller, readScope } from "../domain/caller.js";
import { utcDate } from "../domain/dates.js";
import type { Market, ReferenceData } from "../domain/reference-data.js";
import type { SubmissionType } from "../domain/report.js";
import {
  MAX_MARKETS_PAGE_SIZE,
  type MarketItem,
  type MarketsPage,
  type MarketsQuery,
} from "../schemas/markets.js";
import type { OrganizationStore } from "../store/organization-store.js";
import type { ReferenceDataCache } from "./reference-data.js";

type ProjectsDeps = {
  organizations: OrganizationStore;
  referenceData: ReferenceDataCache;
  now: () => Date;
};

/**
 * GET /api/v1/projects: the projects the caller's organization is engaged with today. A
 * project or operator key gets the engagements active today in its read scope instead (of
 * every market maker for a project's coins; every one for the operator), each with the
 * engaged organization, ordered by coin and organization.
 */
export async function listProjects(deps: ProjectsDeps, caller: Caller) {
  const scope = readScope(caller);
  if (scope.kind !== "organization") {
    const coins = scope.kind === "coins" ? scope.baseCoinIds : undefined;
    const [engagements, ref] = await Promise.all([
      deps.organizations.engagementsAcross(utcDate(deps.now()), coins),
      deps.referenceData.current(),
    ]);
    return {
      items: engagements.map(({ organizationId, organizationName, ...e }) => ({
        organizationId,
        organizationName,
        ...projectItem(e, ref),
      })),
    };
  }
  const [engagements, ref] = await Promise.all([
    deps.organizations.activeEngagements(caller.organizationId, utcDate(deps.now())),
    deps.referenceData.current(),
  ]);
  return { items: latestPerCoin(engagements).map((e) => projectItem(e, ref)) };
}

function projectItem(
  e: { baseCoinId: string; type: SubmissionType; since: string; until: string | null },
  ref: ReferenceData,
) {
  const coin = ref.coins.get(e.baseCoinId);
  return {
    id: e.baseCoinId,
    symbol: coin?.symbol ?? e.baseCoinId,
    name: coin?.name ?? e.baseCoinId,
    engagementType: e.type,
    engagedSince: e.since,
    engagedUntil: e.until,
  };
}

/** GET /api/v1/exchanges: every supported exchange, ordered by id. */
export async function listExchanges(deps: { referenceData: ReferenceDataCache }) {
  const ref = await deps.referenceData.current();
  const items = [...ref.exchanges.values()]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map(({ id, name, spot, derivatives, marketData, group }) => ({
      id,
      name,
      spot,
      derivatives,
      marketData,
      group,
    }));
  return { items };
}

/**
 * GET /api/v1/markets: the markets with market data (on exchanges with `marketData`), so
 * that a market maker can check a pair, and from when it counts, before submitting. Served
 * from the reference data in memory, ordered by the market's key, paged like the reports.
 */
export async function listMarkets(
  deps: { referenceData: ReferenceDataCache },
  query: MarketsQuery,
): Promise<MarketsPage> {
  const ref = await deps.referenceData.current();
  const listed = listedMarkets(ref);
  // Start from the smaller list a filter picks (each keeps the listing order).
  const candidates =
    query.baseCoinId !== undefined
      ? (listed.byBase.get(query.baseCoinId) ?? [])
      : query.exchangeId !== undefined
        ? (listed.byExchange.get(query.exchangeId) ?? [])
        : listed.all;
  const matching =
    query.baseCoinId !== undefined && query.exchangeId !== undefined
      ? candidates.filter((m) => m.exchangeId === query.exchangeId)
      : candidates;
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? MAX_MARKETS_PAGE_SIZE;
  const items = matching.slice((page - 1) * pageSize, page * pageSize).map(toMarketItem);
  return {
    page,
    totalPages: Math.ceil(matching.length / pageSize),
    totalCount: matching.length,
    items,
  };
}

type ListedMarkets = {
  all: readonly Market[];
  byBase: ReadonlyMap<string, readonly Market[]>;
  byExchange: ReadonlyMap<string, readonly Market[]>;
};

/**
 * Per snapshot (immutable), its listed markets in order and indexed by the two filters:
 * built once per reference data version, not per request (a sync can bring 50,000 markets).
 */
const listedBySnapshot = new WeakMap<ReferenceData, ListedMarkets>();

function listedMarkets(ref: ReferenceData): ListedMarkets {
  let listed = listedBySnapshot.get(ref);
  if (listed === undefined) {
    const all = ref.snapshot.markets
      .filter((m) => ref.exchanges.get(m.exchangeId)?.marketData === true)
      .sort(compareMarkets);
    const byBase = new Map<string, Market[]>();
    const byExchange = new Map<string, Market[]>();
    const add = (index: Map<string, Market[]>, key: string, m: Market) => {
      const list = index.get(key);
      if (list === undefined) index.set(key, [m]);
      else list.push(m);
    };
    for (const m of all) {
      add(byBase, m.baseCoinId, m);
      add(byExchange, m.exchangeId, m);
    }
    listed = { all, byBase, byExchange };
    listedBySnapshot.set(ref, listed);
  }
  return listed;
}

/** Plain code-unit order of exchange, base coin, instrument type and quote symbol. */
function compareMarkets(a: Market, b: Market): number {
  for (const key of ["exchangeId", "baseCoinId", "instrumentType", "quoteSymbol"] as const) {
    if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  }
  return 0;
}

function toMarketItem(m: Market): MarketItem {
  return {
    exchangeId: m.exchangeId,
    baseCoinId: m.baseCoinId,
    ...(m.quoteCoinId === null ? {} : { quoteCoinId: m.quoteCoinId }),
    quoteSymbol: m.quoteSymbol,
    instrumentType: m.instrumentType,
    collectedSince: m.collectedSince,
  };
}

/** One item per project: of overlapping active engagements, the one that started last. */
function latestPerCoin<E extends { baseCoinId: string; since: string }>(engagements: E[]): E[] {
  const latest = new Map<string, E>();
  for (const e of engagements) {
    const seen = latest.get(e.baseCoinId);
    if (seen === undefined || e.since > seen.since) latest.set(e.baseCoinId, e);
  }
  return [...latest.values()];
}

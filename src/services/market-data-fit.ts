import type { z } from "zod";
import type { ReferenceSnapshot } from "../domain/reference-data.js";
import { coinSchema, exchangeSchema, marketSchema } from "../schemas/fixture.js";
import type { ReferenceDataSet, ReferenceMarket } from "./market-data-sync.js";
import { marketKey } from "./market-pairs.js";

type ReferenceExchange = ReferenceDataSet["exchanges"][number];

export type FittedSync = {
  data: ReferenceDataSet;
  /** The markets of `data` not stored before. */
  newMarkets: ReferenceMarket[];
  /** What was left out or kept as stored, one line each, naming the CoinGecko id. */
  warnings: string[];
};

/**
 * A sync's data set fitted to what is stored, read under the load's turn (an import committed
 * while the sync fetched is what it is fitted to, not the data read before):
 * - a stored market keeps its `collectedSince` (an operator's import may set an earlier one);
 * - a stored exchange keeps its group: an operator's file decides groups, and a sync of some
 *   exchanges cannot see every member of their families; a new one joins the stored group of
 *   its family (`groups`, from CoinGecko's full lists);
 * - a stored exchange keeps `marketData: false`: an operator decided its data is not collected
 *   (or not trusted), and a sync turning it true would make its reports eligible unseen;
 * - a stored exchange keeps a spot or derivatives flag its stored markets need, with a warning
 *   (CoinGecko moved it between its spot and derivatives lists);
 * - a coin, exchange or market the fixture format refuses (a 201-character name) is left out
 *   with a warning, and so are the markets of a coin or exchange neither kept nor stored.
 */
export function fitToStored(
  found: ReferenceDataSet,
  groups: ReadonlyMap<string, string>,
  stored: ReferenceSnapshot,
): FittedSync {
  const warnings: string[] = [];
  const coins = usable(found.coins, coinSchema, (c) => `coin '${c.id}'`, warnings);
  const fitted = found.exchanges.map((e) => fitExchange(e, groups, stored, warnings));
  const exchanges = usable(fitted, exchangeSchema, (e) => `exchange '${e.id}'`, warnings);
  const coinIds = new Set([...stored.coins, ...coins].map((c) => c.id));
  const exchangeIds = new Set([...stored.exchanges, ...exchanges].map((e) => e.id));
  const since = new Map(stored.markets.map((m) => [marketKey(m), m.collectedSince]));
  const markets = usable(found.markets, marketSchema, marketName, warnings).flatMap((m) => {
    const missing = [m.baseCoinId, m.quoteCoinId ?? m.baseCoinId].find((id) => !coinIds.has(id));
    const reason = !exchangeIds.has(m.exchangeId)
      ? `exchange '${m.exchangeId}'`
      : missing && `coin '${missing}'`;
    if (reason) {
      warnings.push(`${marketName(m)} skipped: ${reason} was left out`);
      return [];
    }
    return [{ ...m, collectedSince: since.get(marketKey(m)) ?? m.collectedSince }];
  });
  const newMarkets = markets.filter((m) => !since.has(marketKey(m)));
  return { data: { coins, exchanges, markets }, newMarkets, warnings };
}

function fitExchange(
  exchange: ReferenceExchange,
  groups: ReadonlyMap<string, string>,
  stored: ReferenceSnapshot,
  warnings: string[],
): ReferenceExchange {
  const before = stored.exchanges.find((e) => e.id === exchange.id);
  if (before === undefined) return { ...exchange, group: familyGroup(exchange.id, groups, stored) };
  const fitted = { ...exchange, group: before.group, marketData: before.marketData };
  if (!before.marketData) {
    warnings.push(
      `exchange '${exchange.id}' has marketData false in the stored reference data: kept false (an import changes it)`,
    );
  }
  for (const [flag, type] of [
    ["spot", "spot"],
    ["derivatives", "perp"],
  ] as const) {
    const needed = stored.markets.some(
      (m) => m.exchangeId === exchange.id && m.instrumentType === type,
    );
    if (fitted[flag] || !needed) continue;
    fitted[flag] = true;
    warnings.push(
      `exchange '${exchange.id}' is no longer in CoinGecko's ${flag} list but has stored ${type} markets: ${flag} kept true`,
    );
  }
  return fitted;
}

/**
 * The group of an exchange not stored yet: the stored group of its family's flagship, else of
 * another stored member of its family, else the family's id (see groupExchanges).
 */
function familyGroup(
  id: string,
  groups: ReadonlyMap<string, string>,
  stored: ReferenceSnapshot,
): string {
  const family = groups.get(id) ?? id;
  const member =
    stored.exchanges.find((e) => e.id === family) ??
    stored.exchanges.find((e) => (groups.get(e.id) ?? e.id) === family);
  return member?.group ?? family;
}

/** The entries `schema` accepts; a warning for each other one, naming it and the first problem. */
function usable<T>(
  entries: T[],
  schema: z.ZodType,
  name: (entry: T) => string,
  warnings: string[],
): T[] {
  return entries.filter((entry) => {
    const parsed = schema.safeParse(entry);
    if (parsed.success) return true;
    const issue = parsed.error.issues[0];
    warnings.push(`${name(entry)} skipped: ${issue?.path.join(".")}: ${issue?.message}`);
    return false;
  });
}

const marketName = (m: ReferenceMarket) =>
  `market ${m.exchangeId} ${m.baseCoinId}/${m.quoteSymbol} (${m.instrumentType})`;

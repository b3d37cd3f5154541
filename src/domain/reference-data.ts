import type { InstrumentType } from "./report.js";

export type Coin = { id: string; symbol: string; name: string };

export type Exchange = {
  id: string;
  name: string;
  spot: boolean;
  derivatives: boolean;
  marketData: boolean;
  group: string;
};

export type Market = {
  exchangeId: string;
  baseCoinId: string;
  quoteCoinId: string | null;
  quoteSymbol: string;
  instrumentType: InstrumentType;
  collectedSince: string;
};

export type ReferenceSnapshot = { coins: Coin[]; exchanges: Exchange[]; markets: Market[] };

/** Coins, exchanges and markets, indexed for the lookups validation and eligibility make. */
export class ReferenceData {
  readonly coins: ReadonlyMap<string, Coin>;
  readonly exchanges: ReadonlyMap<string, Exchange>;
  private readonly groups = new Map<string, Exchange[]>();
  /** Exchange, then base coin and instrument type: nested, so a lookup builds no key string. */
  private readonly markets = new Map<string, Map<string, Market[]>>();

  /** `version` identifies the snapshot: it changes whenever the data does. */
  constructor(
    readonly snapshot: ReferenceSnapshot,
    readonly version = 0,
  ) {
    this.coins = new Map(snapshot.coins.map((c) => [c.id, c]));
    this.exchanges = new Map(snapshot.exchanges.map((e) => [e.id, e]));
    const byId = [...snapshot.exchanges].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const exchange of byId) pushTo(this.groups, exchange.group, exchange);
    for (const market of snapshot.markets) {
      let byBase = this.markets.get(market.exchangeId);
      if (byBase === undefined) {
        byBase = new Map();
        this.markets.set(market.exchangeId, byBase);
      }
      pushTo(byBase, baseKey(market.baseCoinId, market.instrumentType), market);
    }
  }

  /** The exchanges of one venue family, ordered by id. */
  exchangesInGroup(group: string): readonly Exchange[] {
    return this.groups.get(group) ?? [];
  }

  marketsOf(exchangeId: string, baseCoinId: string, type: InstrumentType): readonly Market[] {
    return this.markets.get(exchangeId)?.get(baseKey(baseCoinId, type)) ?? [];
  }
}

/** Spot markets under the coin id itself, perpetuals under a suffixed one. */
function baseKey(baseCoinId: string, type: InstrumentType): string {
  return type === "spot" ? baseCoinId : `${baseCoinId}\u0000perp`;
}

function pushTo<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/**
 * The problem of a coin id not in the catalogue; with no coin loaded at all (a new database),
 * it says how to load them, since no id could be right.
 */
export function unknownCoin(coinId: string, knownCoins: number): string {
  const message = `unknown coin '${coinId}'`;
  if (knownCoins > 0) return message;
  return `${message}: no coins are loaded yet (load reference data first: trading-reports market-data sync, or market-data import FILE, such as demo/reference.json)`;
}

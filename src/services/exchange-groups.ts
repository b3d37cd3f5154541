import type { ReferenceDataSet } from "./market-data-sync.js";

type ReferenceExchange = ReferenceDataSet["exchanges"][number];
export type NamedExchange = { id: string; name: string };

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

export function buildExchanges(
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

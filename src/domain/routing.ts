import type { Exchange, ReferenceData } from "./reference-data.js";
import type { InstrumentType } from "./report.js";

export type Routing = { exchange: Exchange } | { problem: string };

function supports(exchange: Exchange, type: InstrumentType): boolean {
  return type === "spot" ? exchange.spot : exchange.derivatives;
}

/**
 * Where a record of `type` named for `exchange` is stored (spec 4.1): the exchange itself when
 * it has such markets, else the exchange of its venue family (group) that has them.
 */
export function routeExchange(
  exchange: Exchange,
  type: InstrumentType,
  ref: ReferenceData,
): Routing {
  if (supports(exchange, type)) return { exchange };
  const sibling = ref.exchangesInGroup(exchange.group).find((e) => supports(e, type));
  if (sibling !== undefined) return { exchange: sibling };
  return {
    problem:
      type === "spot"
        ? `Exchange '${exchange.name}' is not a spot exchange; set instrumentType to 'perp' for perpetual/derivatives data`
        : `Exchange '${exchange.name}' is not a derivatives exchange; set instrumentType to 'spot' for spot data`,
  };
}

/** v1 records carry no instrument type: spot where the named exchange has spot markets. */
export function v1InstrumentType(exchange: Exchange): InstrumentType {
  return exchange.spot ? "spot" : "perp";
}

import type { Caller } from "../domain/caller.js";
import { calendarPage } from "./dashboard-calendar.js";
import { coinIndex, coinPage, makerPage } from "./dashboard-coins.js";
import { type MarketKey, marketPage } from "./dashboard-market.js";
import { readableEngagements } from "./dashboard-scope.js";

type Deps = Parameters<typeof coinIndex>[0] &
  Parameters<typeof marketPage>[0] &
  Parameters<typeof calendarPage>[0];
type Range = { dateGte?: string; dateLte?: string };
type OrganizationCoin = { organizationId: string; baseCoinId: string };

/**
 * What the dashboard's market, calendar and coin pages show (issue 14), read through the
 * listing, scorecard and obligation services with the caller's scope.
 */
export function createDashboardPages(deps: Deps) {
  return {
    coins: (caller: Caller) => coinIndex(deps, caller),
    coin: (caller: Caller, baseCoinId: string, query: Range) =>
      coinPage(deps, caller, baseCoinId, query),
    maker: (caller: Caller, key: OrganizationCoin, query: Range) =>
      makerPage(deps, caller, key, query),
    calendar: (caller: Caller, key: OrganizationCoin, query: Range) =>
      calendarPage(deps, caller, key, query),
    market: (caller: Caller, market: MarketKey, query: Range) =>
      marketPage(deps, caller, market, query),
    readableEngagements: (caller: Caller) => readableEngagements(deps, caller),
  };
}

import type { Caller } from "../domain/caller.js";
import { utcDate } from "../domain/dates.js";
import type { OrganizationStore } from "../store/organization-store.js";
import type { ReferenceDataCache } from "./reference-data.js";

/** GET /api/v1/projects: the projects the caller's organization is engaged with today. */
export async function listProjects(
  deps: { organizations: OrganizationStore; referenceData: ReferenceDataCache; now: () => Date },
  caller: Caller,
) {
  const [engagements, ref] = await Promise.all([
    deps.organizations.activeEngagements(caller.organizationId, utcDate(deps.now())),
    deps.referenceData.current(),
  ]);
  return {
    items: latestPerCoin(engagements).map((e) => {
      const coin = ref.coins.get(e.baseCoinId);
      return {
        id: e.baseCoinId,
        symbol: coin?.symbol ?? e.baseCoinId,
        name: coin?.name ?? e.baseCoinId,
        engagementType: e.type,
        engagedSince: e.since,
        engagedUntil: e.until,
      };
    }),
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

/** One item per project: of overlapping active engagements, the one that started last. */
function latestPerCoin<E extends { baseCoinId: string; since: string }>(engagements: E[]): E[] {
  const latest = new Map<string, E>();
  for (const e of engagements) {
    const seen = latest.get(e.baseCoinId);
    if (seen === undefined || e.since > seen.since) latest.set(e.baseCoinId, e);
  }
  return [...latest.values()];
}

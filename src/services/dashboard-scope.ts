import { type Caller, readScope, scopeReads } from "../domain/caller.js";
import { NotFoundError } from "../domain/errors.js";
import type { OrganizationStore } from "../store/organization-store.js";

/**
 * The name of the market maker whose pages for a coin the caller opens: in the caller's scope
 * and engaged (now or once) for the coin. Anything else is not found, so that a URL reveals
 * neither another scope's data nor which organizations exist.
 */
export async function engagedMakerName(
  deps: { organizations: OrganizationStore },
  caller: Caller,
  key: { organizationId: string; baseCoinId: string },
  notFound: string,
): Promise<string> {
  if (!scopeReads(readScope(caller), key.organizationId, key.baseCoinId))
    throw new NotFoundError(notFound);
  const [organization, engagements] = await Promise.all([
    deps.organizations.organization(key.organizationId),
    deps.organizations.engagements(key.organizationId),
  ]);
  if (organization === undefined || !engagements.some((e) => e.baseCoinId === key.baseCoinId))
    throw new NotFoundError(notFound);
  return organization.name;
}

/**
 * The market makers and coins a project's or operator's key reads reports of: every
 * engagement in its scope, ended ones included (CONTRACT section 4), with names. What the
 * reports page offers as filters; a market maker's key reads its active engagements' coins.
 */
export async function readableEngagements(
  deps: { organizations: OrganizationStore },
  caller: Caller,
): Promise<{ organizationId: string; organizationName: string; baseCoinId: string }[]> {
  const scope = readScope(caller);
  if (scope.kind === "organization") return [];
  const coins = scope.kind === "coins" ? scope.baseCoinIds : undefined;
  return deps.organizations.engagementsAcross(undefined, coins);
}

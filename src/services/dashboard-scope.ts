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

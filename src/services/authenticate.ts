import { AUTHENTICATION_FAILURES, hashApiKey, keyFromAuthorization } from "../domain/api-key.js";
import type { Caller } from "../domain/caller.js";
import { AuthenticationError } from "../domain/errors.js";
import type { ApiKeyOwner, OrganizationStore } from "../store/organization-store.js";

const TOUCH_EVERY_MS = 60_000;

/**
 * Finds the organization behind an Authorization header. The key is looked up on every
 * request, so a key revoked by any process fails on its very next use. Its last-used time is
 * written at most once a minute per process, to keep a write off most requests.
 * `callerOf` judges a key already read (a dashboard session reads its key with the session):
 * the same revocation check, the same last-used time, the same caller.
 */
export function createAuthenticator(deps: { organizations: OrganizationStore; now: () => Date }) {
  const touchedAt = new Map<string, number>();
  async function callerOf(record: ApiKeyOwner): Promise<Caller> {
    if (record.revokedAt !== null) throw new AuthenticationError(AUTHENTICATION_FAILURES.revoked);
    const now = deps.now();
    if (now.getTime() - (touchedAt.get(record.id) ?? 0) >= TOUCH_EVERY_MS) {
      touchedAt.set(record.id, now.getTime());
      // Bookkeeping, not the answer: a key is not refused because its last-used time could
      // not be written (a disk nearly full, a row another transaction holds); a minute later
      // it is tried again.
      await deps.organizations.touchApiKey(record.id, now).catch(() => {});
    }
    return {
      organizationId: record.organizationId,
      apiKeyId: record.id,
      kind: record.kind,
      coins: record.coins,
      ...(record.lastWriteLsn === null ? {} : { readAfter: record.lastWriteLsn }),
    };
  }
  async function authenticate(authorization: string | undefined): Promise<Caller> {
    const key = keyFromAuthorization(authorization);
    if (key === undefined) throw new AuthenticationError(AUTHENTICATION_FAILURES.missing);
    const record = await deps.organizations.findApiKeyByHash(hashApiKey(key));
    if (record === undefined) throw new AuthenticationError(AUTHENTICATION_FAILURES.invalid);
    return callerOf(record);
  }
  return { authenticate, callerOf };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

import type { z } from "zod";
import type { CoinGeckoClient, RetryInfo } from "../adapters/coingecko-client.js";
import { apiKeyPrefix, generateApiKey, hashApiKey, keysMatching } from "../domain/api-key.js";
import { utcDate } from "../domain/dates.js";
import { ConflictError, NotFoundError, ValidationError } from "../domain/errors.js";
import { organizationProfileProblems } from "../domain/organization.js";
import { ReferenceData } from "../domain/reference-data.js";
import { newOrganizationSchema } from "../schemas/fixture.js";
import { parseOrRefuse } from "../schemas/problems.js";
import { scorecardQuerySchema } from "../schemas/scorecards.js";
import type { Stores } from "../store/stores.js";
import { recomputeEligibility } from "./eligibility.js";
import { createEngagementAdmin } from "./engagements.js";
import { loadFixture, loadFixtureOf } from "./fixtures.js";
import { syncMarketData } from "./market-data-sync.js";
import { createObligationAdmin } from "./obligations.js";
import { createQualityAdmin, type SyncOptions } from "./quality-admin.js";
import { depthSnapshotsOf, recordDepthSnapshots } from "./quality-snapshots.js";
import { getDailyScorecards, getScorecards } from "./scorecards.js";

export type AdminOptions = {
  now?: () => Date;
  /** REPORT_DEADLINE_UTC (`HH:MM`); default 12:00. */
  reportDeadlineUtc?: string;
  /** The CoinGecko client of `syncMarketData`, told where to report its retries. */
  coinGecko: (onRetry: (info: RetryInfo) => void) => CoinGeckoClient;
};

/** Operator use cases: organizations, API keys, engagements, market data, eligibility. */
export function createAdminServices(stores: Stores, options: AdminOptions) {
  const now = options.now ?? (() => new Date());
  const scoring = { scorecards: stores.scorecards, now, deadlineUtc: options.reportDeadlineUtc };
  const { organizations, references } = stores;
  const { coinGecko } = options;

  const requireOrganization = async (id: string) => {
    const org = await organizations.organization(id);
    if (org === undefined) throw new NotFoundError(`organization '${id}' does not exist`);
    return org;
  };

  return {
    /** A market maker, or (with `kind`) a project owning `coins`, or an operator. */
    async createOrganization(input: z.input<typeof newOrganizationSchema>) {
      const org = parseOrRefuse(newOrganizationSchema, input);
      const { snapshot } = await references.snapshot();
      const profile = { kind: org.kind, coins: org.coins, engagements: 0 };
      const problems = organizationProfileProblems(
        profile,
        new Set(snapshot.coins.map((c) => c.id)),
      );
      if (problems.length > 0) throw new ValidationError(problems);
      await stores.transaction(async (tx) => {
        if ((await tx.organizations.organization(org.id)) !== undefined) {
          throw new ConflictError(`organization '${org.id}' already exists`);
        }
        await tx.organizations.upsertOrganization(org.id, org.name);
        await tx.organizations.setProfile(org.id, org.kind, org.coins);
      });
      return org;
    },

    listOrganizations: () => organizations.organizations(),

    /** Obligation periods: set, list, end (see obligations.ts). */
    obligations: createObligationAdmin(stores),
    quality: createQualityAdmin(stores, { now, coinGecko }),
    /** Scorecards of every obligation market (the operator's scope), as the API computes them. */
    scorecards: (query: unknown) =>
      getScorecards(scoring, { kind: "all" }, parseOrRefuse(scorecardQuerySchema, query)),
    /** The same, day by day (GET /api/v1/scorecards/daily with the operator's scope). */
    dailyScorecards: (query: unknown) =>
      getDailyScorecards(scoring, { kind: "all" }, parseOrRefuse(scorecardQuerySchema, query)),

    /** Creates a key; the plaintext is returned this once and never stored. */
    async createApiKey(organizationId: string, label: string) {
      await requireOrganization(organizationId);
      const key = generateApiKey();
      const id = await organizations.addApiKey({
        organizationId,
        hash: hashApiKey(key),
        prefix: apiKeyPrefix(key),
        label,
      });
      return { id, key, prefix: apiKeyPrefix(key), label };
    },

    async listApiKeys(organizationId: string) {
      await requireOrganization(organizationId);
      return organizations.apiKeys(organizationId);
    },

    /**
     * Revokes the organization's active key with this id, or the one whose id or prefix begins
     * with it; a prefix that fits several keys revokes nothing and names them.
     */
    async revokeApiKey(organizationId: string, idOrPrefix: string) {
      await requireOrganization(organizationId);
      const active = (await organizations.apiKeys(organizationId)).filter(
        (k) => k.revokedAt === null,
      );
      const matches = keysMatching(active, idOrPrefix);
      const [match] = matches;
      if (match === undefined)
        throw new NotFoundError(
          `no active key '${idOrPrefix}' for organization '${organizationId}'`,
        );
      if (matches.length > 1) {
        const names = matches.map(
          (k) =>
            `${k.id}${k.prefix === "" ? "" : ` (${k.prefix})`}${k.label ? ` "${k.label}"` : ""}`,
        );
        throw new ValidationError([
          {
            path: "idOrPrefix",
            message: `'${idOrPrefix}' matches ${matches.length} active keys: ${names.join(", ")}; give more of the id`,
          },
        ]);
      }
      const revoked = await organizations.revokeApiKey({ id: match.id, organizationId }, now());
      return { revoked, id: match.id };
    },

    /** Engagements: add, end, list (see engagements.ts). */
    ...createEngagementAdmin(stores, { now, requireOrganization }),

    /** Loads a whole fixture (see fixtures.ts). */
    loadFixture: (input: unknown) => loadFixture(stores, input, now()),

    /**
     * Loads coins, exchanges and markets from a fixture file, then recomputes eligibility.
     * A whole fixture is accepted: its organizations are left out (keys and engagements are
     * managed with their own commands).
     */
    async importMarketData(input: unknown) {
      return loadFixture(stores, withoutOrganizations(input), now());
    },

    /**
     * Fetches reference data from CoinGecko, loads it like an import, keeps public depth. What
     * is stored is read again under the load's turn (fitToStored): an import committed while
     * the sync fetched keeps its collectedSince and groups.
     */
    async syncMarketData(options: SyncOptions) {
      const { snapshot } = await references.snapshot();
      const coinIds = options.coinIds ?? (await organizations.engagedCoinIds());
      let summary = { changed: 0, eligibilityChanged: 0 };
      const result = await syncMarketData({
        client: coinGecko(options.onRetry ?? (() => {})),
        coinIds,
        exchangeIds: options.exchangeIds ?? snapshot.exchanges.map((e) => e.id),
        today: utcDate(now()),
        onProgress: options.onProgress,
        applyReferenceData: async (dataOf) => {
          summary = await loadFixtureOf(stores, dataOf, now());
        },
      });
      await stores.operator.markSynced(now());
      const depth = depthSnapshotsOf(result.spotTickers, result.markets, now());
      return {
        ...(await recordDepthSnapshots(stores, depth)),
        coins: result.coins.length,
        exchanges: result.exchanges.length,
        markets: result.markets.length,
        newMarkets: result.newMarkets.length,
        unknownCoinIds: result.unknownCoinIds,
        unknownExchangeIds: result.unknownExchangeIds,
        warnings: result.warnings,
        ...summary,
      };
    },

    async recomputeEligibility() {
      // Read under the turn: a load committing between the read and the writes would see its
      // results overwritten from the data before it.
      const changed = await stores.transaction(async (tx) => {
        await tx.references.takeTurnToChange();
        const ref = new ReferenceData((await tx.references.snapshot()).snapshot);
        return recomputeEligibility(tx.eligibility, ref);
      });
      return { changed };
    },
  };
}

export type AdminServices = ReturnType<typeof createAdminServices>;

/** A fixture's reference data: the `organizations` section left out, the rest as given. */
function withoutOrganizations(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).filter(([key]) => key !== "organizations"));
}

import type { Kysely } from "kysely";
import { z } from "zod";
import { apiKeyPrefix, generateApiKey, hashApiKey, keysMatching } from "../domain/api-key.js";
import { utcDate } from "../domain/dates.js";
import { describePeriod, overlaps } from "../domain/engagement.js";
import { ConflictError, NotFoundError, ValidationError } from "../domain/errors.js";
import { ReferenceData } from "../domain/reference-data.js";
import { SUBMISSION_TYPES } from "../domain/report.js";
import { problemsOf } from "../schemas/problems.js";
import { dateSchema } from "../schemas/report.js";
import { zod3Messages } from "../schemas/zod-messages.js";
import { createEligibilityStore } from "../store/eligibility-store.js";
import { createOrganizationStore } from "../store/organization-store.js";
import { createReferenceStore } from "../store/reference-store.js";
import { withTransientRetry } from "../store/retry.js";
import type { Tables } from "../store/tables.js";
import type { CoinGeckoClient } from "./coingecko-client.js";
import { recomputeEligibility } from "./eligibility.js";
import { loadFixture } from "./fixtures.js";
import { syncMarketData } from "./market-data-sync.js";

const organizationInput = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lower-case letters, digits, - and _, at most 63"),
  name: z.string().min(1).max(200),
});
const engagementInput = z
  .object({
    baseCoinId: z.string().min(1),
    type: z.enum(SUBMISSION_TYPES),
    since: dateSchema,
    until: dateSchema.nullable(),
  })
  .refine((e) => e.until === null || e.until >= e.since, {
    message: "until must not be before since",
    path: ["until"],
  });

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input, zod3Messages);
  if (!parsed.success) throw new ValidationError(problemsOf(parsed.error));
  return parsed.data;
}

/** Operator use cases: organizations, API keys, engagements, market data, eligibility. */
export function createAdminServices(db: Kysely<Tables>, now: () => Date = () => new Date()) {
  const organizations = createOrganizationStore(db);
  const references = createReferenceStore(db);

  const requireOrganization = async (id: string) => {
    const org = await organizations.organization(id);
    if (org === undefined) throw new NotFoundError(`organization '${id}' does not exist`);
    return org;
  };

  return {
    async createOrganization(input: { id: string; name: string }) {
      const org = parse(organizationInput, input);
      if ((await organizations.organization(org.id)) !== undefined) {
        throw new ConflictError(`organization '${org.id}' already exists`);
      }
      await organizations.upsertOrganization(db, org.id, org.name);
      return org;
    },

    listOrganizations: () => organizations.organizations(),

    /** Creates a key; the plaintext is returned this once and never stored. */
    async createApiKey(organizationId: string, label: string) {
      await requireOrganization(organizationId);
      const key = generateApiKey();
      const id = await organizations.addApiKey(db, {
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
      const revoked = await organizations.revokeApiKey(db, { id: match.id, organizationId }, now());
      return { revoked, id: match.id };
    },

    async addEngagement(organizationId: string, input: z.input<typeof engagementInput>) {
      await requireOrganization(organizationId);
      const engagement = parse(engagementInput, input);
      const snapshot = (await references.snapshot()).snapshot;
      if (!snapshot.coins.some((c) => c.id === engagement.baseCoinId)) {
        throw new ValidationError([
          { path: "baseCoinId", message: `unknown coin '${engagement.baseCoinId}'` },
        ]);
      }
      await db.transaction().execute(async (trx) => {
        const store = createOrganizationStore(trx);
        await store.lockOrganization(organizationId);
        const clash = (await store.engagements(organizationId)).find((other) =>
          overlaps(other, engagement),
        );
        if (clash !== undefined) {
          throw new ValidationError([
            {
              path: "since",
              message: `overlaps the ${describePeriod(clash)} (one engagement per organization and coin on any day; end it first)`,
            },
          ]);
        }
        await store.upsertEngagement(trx, { organizationId, ...engagement });
      });
      return { organizationId, ...engagement };
    },

    async endEngagement(
      organizationId: string,
      baseCoinId: string,
      until: string = utcDate(now()),
    ) {
      await requireOrganization(organizationId);
      parse(dateSchema, until);
      const ended = await organizations.endEngagement(organizationId, baseCoinId, until);
      if (ended === 0)
        throw new NotFoundError(
          `no engagement of '${organizationId}' for '${baseCoinId}' runs past ${until}`,
        );
      return { ended, until };
    },

    async listEngagements(organizationId: string) {
      await requireOrganization(organizationId);
      return organizations.engagements(organizationId);
    },

    /**
     * Loads coins, exchanges and markets from a fixture file, then recomputes eligibility.
     * A whole fixture is accepted: its organizations are left out (keys and engagements are
     * managed with their own commands).
     */
    async importMarketData(input: unknown) {
      return loadFixture(db, withoutOrganizations(input), now());
    },

    /** Fetches reference data from CoinGecko and loads it like an import. */
    async syncMarketData(
      client: CoinGeckoClient,
      options: {
        coinIds?: string[];
        exchangeIds?: string[];
        onProgress?: (done: number, total: number, label: string) => void;
      },
    ) {
      const { snapshot } = await references.snapshot();
      const coinIds = options.coinIds ?? (await allEngagedCoins(db));
      let summary = { changed: 0, eligibilityChanged: 0 };
      const result = await syncMarketData({
        client,
        coinIds,
        exchangeIds: options.exchangeIds ?? snapshot.exchanges.map((e) => e.id),
        today: utcDate(now()),
        existingMarkets: snapshot.markets,
        onProgress: options.onProgress,
        applyReferenceData: async (data) => {
          summary = await loadFixture(db, data, now());
        },
      });
      return {
        coins: result.coins.length,
        exchanges: result.exchanges.length,
        markets: result.markets.length,
        newMarkets: result.newMarkets.length,
        unknownCoinIds: result.unknownCoinIds,
        unknownExchangeIds: result.unknownExchangeIds,
        ...summary,
      };
    },

    async recomputeEligibility() {
      const ref = new ReferenceData((await references.snapshot()).snapshot);
      const changed = await withTransientRetry(() =>
        recomputeEligibility(createEligibilityStore(db), ref),
      );
      return { changed };
    },
  };
}

export type AdminServices = ReturnType<typeof createAdminServices>;

async function allEngagedCoins(db: Kysely<Tables>): Promise<string[]> {
  const rows = await db.selectFrom("engagements").select("base_coin_id").distinct().execute();
  return rows.map((r) => r.base_coin_id);
}

/** A fixture's reference data: the `organizations` section left out, the rest as given. */
function withoutOrganizations(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).filter(([key]) => key !== "organizations"));
}

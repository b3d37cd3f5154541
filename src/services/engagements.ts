import type { z } from "zod";
import { organizationOfKind } from "../domain/caller.js";
import { utcDate } from "../domain/dates.js";
import { describePeriod, overlaps } from "../domain/engagement.js";
import { NotFoundError, ValidationError } from "../domain/errors.js";
import { periodsOutsideEngagements } from "../domain/obligation-rules.js";
import { unknownCoin } from "../domain/reference-data.js";
import { engagementSchema } from "../schemas/fixture.js";
import { parseOrRefuse } from "../schemas/problems.js";
import { dateSchema } from "../schemas/report.js";
import type { Stores } from "../store/stores.js";

/** How many of an organization's obligation periods an engagement change ended or removed. */
export type ObligationsFitted = { obligationsEnded: number; obligationsRemoved: number };

/**
 * Keeps every obligation period of the organization inside its engagement, after engagements
 * changed in `tx` (periodsOutsideEngagements: ended on the engagement's new end, or removed
 * when they start after it). Call it with the organization locked.
 */
export async function fitObligationsToEngagements(
  tx: Stores,
  organizationId: string,
): Promise<ObligationsFitted> {
  const engagements = await tx.organizations.engagements(organizationId);
  const periods = await tx.obligations.list({ kind: "organization", organizationId });
  const fitted = { obligationsEnded: 0, obligationsRemoved: 0 };
  for (const fit of periodsOutsideEngagements(periods, engagements)) {
    if ("removed" in fit) {
      await tx.obligations.remove(fit.period);
      fitted.obligationsRemoved++;
    } else {
      await tx.obligations.shorten(fit.period, fit.endsOn);
      fitted.obligationsEnded++;
    }
  }
  return fitted;
}

/** Operator use cases of engagements: add (or change the end of) one, end one, list them. */
export function createEngagementAdmin(
  stores: Stores,
  deps: { now: () => Date; requireOrganization: (id: string) => Promise<{ kind: string }> },
) {
  const { now, requireOrganization } = deps;
  return {
    /**
     * Engages a market maker for a coin from `since`; the same `since` again changes that
     * engagement's type and end, and an end moved back takes its obligations with it.
     */
    async addEngagement(organizationId: string, input: z.input<typeof engagementSchema>) {
      const org = await requireOrganization(organizationId);
      if (org.kind !== "market_maker") {
        throw new ValidationError([
          {
            path: "organizationId",
            message: `'${organizationId}' is ${organizationOfKind(org.kind)}; only market makers are engaged`,
          },
        ]);
      }
      const parsed = parseOrRefuse(engagementSchema, input);
      const engagement = { ...parsed, until: parsed.until ?? null };
      const snapshot = (await stores.references.snapshot()).snapshot;
      if (!snapshot.coins.some((c) => c.id === engagement.baseCoinId)) {
        throw new ValidationError([
          {
            path: "baseCoinId",
            message: unknownCoin(engagement.baseCoinId, snapshot.coins.length),
          },
        ]);
      }
      const fitted = await stores.transaction(async (tx) => {
        const store = tx.organizations;
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
        await store.upsertEngagement({ organizationId, ...engagement });
        return fitObligationsToEngagements(tx, organizationId);
      });
      return { organizationId, ...engagement, ...fitted };
    },

    /** Ends the engagement running past `until` on that day, and its obligations with it. */
    async endEngagement(
      organizationId: string,
      baseCoinId: string,
      until: string = utcDate(now()),
    ) {
      await requireOrganization(organizationId);
      parseOrRefuse(dateSchema, until);
      const { ended, fitted } = await stores.transaction(async (tx) => {
        await tx.organizations.lockOrganization(organizationId);
        const n = await tx.organizations.endEngagement(organizationId, baseCoinId, until);
        return {
          ended: n,
          fitted: n > 0 ? await fitObligationsToEngagements(tx, organizationId) : undefined,
        };
      });
      if (fitted === undefined) {
        const engaged = await stores.organizations.engagements(organizationId);
        const later = engaged.find((e) => e.baseCoinId === baseCoinId && e.since > until);
        throw new NotFoundError(
          later === undefined
            ? `no engagement of '${organizationId}' for '${baseCoinId}' runs past ${until}`
            : `the engagement of '${organizationId}' for '${baseCoinId}' begins on ${later.since}, after ${until}: it cannot end before it begins`,
        );
      }
      return { ended, until, ...fitted };
    },

    async listEngagements(organizationId: string) {
      await requireOrganization(organizationId);
      return stores.organizations.engagements(organizationId);
    },
  };
}

import { type Caller, readScope } from "../domain/caller.js";
import { NotFoundError, ValidationError } from "../domain/errors.js";
import type { ObligationPeriod } from "../domain/obligation.js";
import { ReferenceData } from "../domain/reference-data.js";
import {
  type ObligationsQuery,
  type ObligationsResponse,
  obligationPeriodSchema,
} from "../schemas/obligation.js";
import { parseOrRefuse, problemsOf } from "../schemas/problems.js";
import { dateSchema } from "../schemas/report.js";
import { zod3Messages } from "../schemas/zod-messages.js";
import type { ObligationStore } from "../store/obligation-store.js";
import type { Stores } from "../store/stores.js";
import { obligationProblems } from "./obligation-checks.js";

/** GET /api/v1/obligations: the periods in the caller's read scope (CONTRACT section 4). */
export async function listObligations(
  deps: { obligations: ObligationStore },
  caller: Caller,
  query: ObligationsQuery,
): Promise<ObligationsResponse> {
  return { items: await deps.obligations.list(readScope(caller), query) };
}

/** Operator use cases of obligations: set a period, list them all, end one. */
export function createObligationAdmin(stores: Stores) {
  const requireOrganization = async (id: string) => {
    if ((await stores.organizations.organization(id)) === undefined)
      throw new NotFoundError(`organization '${id}' does not exist`);
  };

  return {
    /**
     * Creates the period of an organization and coin starting on `since`, or replaces its end,
     * markets and KPIs; checked against reference data, engagements and the stored periods.
     */
    async set(
      organizationId: string,
      baseCoinId: string,
      input: unknown,
    ): Promise<ObligationPeriod> {
      await requireOrganization(organizationId);
      const parsed = parseOrRefuse(obligationPeriodSchema, input);
      const period = { organizationId, baseCoinId, ...parsed, until: parsed.until ?? null };
      await stores.transaction(async (tx) => {
        // Two writers of one organization's periods check for overlaps one after the other.
        await tx.organizations.lockOrganization(organizationId);
        const ref = new ReferenceData((await tx.references.snapshot()).snapshot);
        const engagements = await tx.organizations.engagements(organizationId);
        const stored = await tx.obligations.periodsOf(organizationId, baseCoinId);
        const problems = obligationProblems([{ path: "", period, engagements }], ref, stored);
        if (problems.length > 0) throw new ValidationError(problems);
        await tx.obligations.upsert(period);
      });
      return period;
    },

    list: (filter: ObligationsQuery = {}) => stores.obligations.list({ kind: "all" }, filter),

    /** Ends the period holding `date` on that day. */
    async end(organizationId: string, baseCoinId: string, date: string) {
      await requireOrganization(organizationId);
      const parsed = dateSchema.safeParse(date, zod3Messages);
      if (!parsed.success) throw new ValidationError(problemsOf(parsed.error, ["date"]));
      const ended = await stores.obligations.end(organizationId, baseCoinId, date);
      if (ended === 0)
        throw new NotFoundError(
          `no obligation period of '${organizationId}' for '${baseCoinId}' holds ${date}`,
        );
      return { organizationId, baseCoinId, until: date };
    },
  };
}

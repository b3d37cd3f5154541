import { type Caller, readScope } from "../domain/caller.js";
import { UnavailableError } from "../domain/errors.js";
import type { SchemaVersion } from "../domain/report.js";
import type { ListQuery } from "../schemas/list-query.js";
import type { MarketsQuery } from "../schemas/markets.js";
import type { ObligationsQuery } from "../schemas/obligation.js";
import type { ScorecardQuery } from "../schemas/scorecards.js";
import type { Stores } from "../store/stores.js";
import { isDatabaseUnavailable } from "../store/unavailable.js";
import { createAuthenticator } from "./authenticate.js";
import { exportReports, listReportsJson } from "./list-reports.js";
import { listObligations } from "./obligations.js";
import { ReferenceDataCache } from "./reference-data.js";
import { listExchanges, listMarkets, listProjects } from "./reference-listing.js";
import { DEFAULT_REPORT_DEADLINE_UTC, getDailyScorecards, getScorecards } from "./scorecards.js";
import { assertMaySubmit, submitReports } from "./submit-reports.js";
import { createWebhookServices, DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from "./webhooks.js";

export type ServiceOptions = {
  referenceDataCheckMs: number;
  now?: () => Date;
  /** REPORT_DEADLINE_UTC (`HH:MM`); default 12:00. */
  reportDeadlineUtc?: string;
  /** Webhook target policy and limit (CONTRACT section 7); default: https, public, 10. */
  webhooks?: WebhookOptions;
};

/** The use cases the HTTP layer (and the CLI) call, wired to their stores. */
export function createServices(stores: Stores, options: ServiceOptions) {
  const now = options.now ?? (() => new Date());
  const { organizations, reports, listing, scopedListing } = stores;
  const referenceData = new ReferenceDataCache(stores.references, options.referenceDataCheckMs);
  const authenticate = createAuthenticator({ organizations, now });
  const scoring = {
    scorecards: stores.scorecards,
    now,
    deadlineUtc: options.reportDeadlineUtc ?? DEFAULT_REPORT_DEADLINE_UTC,
  };
  return {
    referenceData,
    authenticate: unavailableWhenDatabaseIs(authenticate),
    /** Throws the 403 of a key that may not submit (checked before the body is read). */
    assertMaySubmit,
    submitReports: unavailableWhenDatabaseIs(
      (caller: Caller, request: { version: SchemaVersion; body: unknown; dryRun: boolean }) =>
        submitReports({ reports, referenceData, now }, caller, request),
    ),
    /** The listing response as JSON text (see listReportsJson). */
    listReportsJson: unavailableWhenDatabaseIs((caller: Caller, query: ListQuery) =>
      listReportsJson({ listing, scopedListing, organizations, now }, caller, query),
    ),
    /** Not wrapped: a generator's errors surface while it is consumed (see the route). */
    exportReports: (caller: Caller, query: ListQuery) =>
      exportReports({ listing, scopedListing, organizations, now }, caller, query),
    listProjects: unavailableWhenDatabaseIs((caller: Caller) =>
      listProjects({ organizations, referenceData, now }, caller),
    ),
    listExchanges: unavailableWhenDatabaseIs(() => listExchanges({ referenceData })),
    listMarkets: unavailableWhenDatabaseIs((query: MarketsQuery) =>
      listMarkets({ referenceData }, query),
    ),
    listObligations: unavailableWhenDatabaseIs((caller: Caller, query: ObligationsQuery) =>
      listObligations({ obligations: stores.obligations }, caller, query),
    ),
    /** Scorecards of the obligation markets in the caller's read scope. */
    getScorecards: unavailableWhenDatabaseIs((caller: Caller, query: ScorecardQuery) =>
      getScorecards(scoring, readScope(caller), query),
    ),
    getDailyScorecards: unavailableWhenDatabaseIs((caller: Caller, query: ScorecardQuery) =>
      getDailyScorecards(scoring, readScope(caller), query),
    ),
    /** Webhook subscriptions of the caller's organization (CONTRACT section 7). */
    webhooks: guarded(
      createWebhookServices(stores, now, options.webhooks ?? DEFAULT_WEBHOOK_OPTIONS),
    ),
    ready: unavailableWhenDatabaseIs(() => stores.ping()),
    /** Runs any database work with the same "unavailable" translation as the services. */
    guard: <T>(work: () => Promise<T>) => unavailableWhenDatabaseIs(work)(),
  };
}

export type Services = ReturnType<typeof createServices>;

/** Every function of `functions`, unavailable when the database is. */
function guarded<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  functions: T,
): T {
  return Object.fromEntries(
    Object.entries(functions).map(([name, fn]) => [name, unavailableWhenDatabaseIs(fn)]),
  ) as T;
}

/** Turns "the database cannot be reached" into a domain error the caller can retry. */
function unavailableWhenDatabaseIs<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    try {
      return await fn(...args);
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        throw new UnavailableError("database unavailable", { cause: error });
      }
      throw error;
    }
  };
}

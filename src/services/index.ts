import type { Caller } from "../domain/caller.js";
import { DEFAULT_SESSION_LIMITS, type SessionLimits } from "../domain/dashboard-session.js";
import { UnavailableError } from "../domain/errors.js";
import type { MarketsQuery } from "../schemas/markets.js";
import type { ObligationsQuery } from "../schemas/obligation.js";
import { primaryOnly, type ReadRouting } from "../store/read-router.js";
import type { Stores } from "../store/stores.js";
import { isDatabaseUnavailable } from "../store/unavailable.js";
import { createAuthenticator } from "./authenticate.js";
import { createDashboardSessions } from "./dashboard-sessions.js";
import { listObligations } from "./obligations.js";
import { createOperatorViews } from "./operator-views.js";
import { ReferenceDataCache } from "./reference-data.js";
import { listExchanges, listMarkets, listProjects } from "./reference-listing.js";
import { assertHasReportCard } from "./report-card.js";
import { createRoutedReads } from "./routed-reads.js";
import { DEFAULT_REPORT_DEADLINE_UTC } from "./scorecards.js";
import type { SubmissionMeter } from "./submission-meter.js";
import { createSubmissionServices } from "./submission-services.js";
import { assertMaySubmit } from "./submit-reports.js";
import { createWebhookServices, DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from "./webhooks.js";

export type ServiceOptions = {
  referenceDataCheckMs: number;
  now?: () => Date;
  /** REPORT_DEADLINE_UTC (`HH:MM`); default 12:00. */
  reportDeadlineUtc?: string;
  /** Webhook target policy and limit (CONTRACT section 7); default: https, public, 10. */
  webhooks?: WebhookOptions;
  /** Dashboard session expiry; default DEFAULT_SESSION_LIMITS. */
  dashboardSessions?: SessionLimits;
  /** Hears every decided submission (GET /metrics); none: nothing is counted. */
  submissionMeter?: SubmissionMeter;
  /** Where listing, export, scorecard, report card and dashboard reads go; default: `stores`. */
  reads?: ReadRouting;
};

/** The use cases the HTTP layer (and the CLI) call, wired to their stores. */
export function createServices(stores: Stores, options: ServiceOptions) {
  const now = options.now ?? (() => new Date());
  const { organizations } = stores;
  const reads = options.reads ?? primaryOnly(stores);
  const referenceData = new ReferenceDataCache(stores.references, options.referenceDataCheckMs);
  const authenticator = createAuthenticator({ organizations, now });
  const deadlineUtc = options.reportDeadlineUtc ?? DEFAULT_REPORT_DEADLINE_UTC;
  const { exportReports, dashboardPages, ...routedReads } = createRoutedReads(reads, {
    now,
    deadlineUtc,
    referenceData,
  });
  return {
    referenceData,
    authenticate: unavailableWhenDatabaseIs(authenticator.authenticate),
    /** Dashboard sign-in, sessions and sign-out (`/app`). */
    dashboardSessions: dashboardSessionsOf(stores, authenticator, now, options),
    /** Throws the 403 of a key that may not submit (checked before the body is read). */
    assertMaySubmit,
    /** Throws the 403 of a key without a report card (checked before its query is). */
    assertHasReportCard,
    ...guarded(
      submissionServicesOf(
        stores,
        referenceData,
        { now, deadlineUtc },
        {
          meter: options.submissionMeter,
          reads,
        },
      ),
    ),
    ...guarded(routedReads),
    /** Not wrapped: a generator's errors surface while it is consumed (see the route). */
    exportReports,
    dashboardPages: guarded(dashboardPages),
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
    /** Webhook subscriptions of the caller's organization (CONTRACT section 7). */
    webhooks: guarded(
      createWebhookServices(stores, now, options.webhooks ?? DEFAULT_WEBHOOK_OPTIONS),
    ),
    /** The operator's views of the platform (organizations, engagements, keys, market data). */
    operator: guarded(createOperatorViews({ ...stores, referenceData })),
    ready: unavailableWhenDatabaseIs(() => stores.ping()),
    /** The read replica's state for `/readyz` (undefined without DATABASE_READ_URL). */
    readReplica: () => reads.replica(),
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

function submissionServicesOf(
  stores: Stores,
  referenceData: ReferenceDataCache,
  scoring: { now: () => Date; deadlineUtc: string },
  observers: { meter: SubmissionMeter | undefined; reads: ReadRouting },
) {
  return createSubmissionServices({ stores, referenceData, ...scoring, ...observers });
}

function dashboardSessionsOf(
  stores: Stores,
  authenticator: ReturnType<typeof createAuthenticator>,
  now: () => Date,
  options: ServiceOptions,
) {
  const sessions = createDashboardSessions({
    sessions: stores.dashboardSessions,
    authenticator,
    now,
    limits: options.dashboardSessions ?? DEFAULT_SESSION_LIMITS,
  });
  return guarded({
    signIn: sessions.signIn,
    resume: sessions.resume,
    signOut: sessions.signOut,
  });
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

import type { Kysely } from "kysely";
import {
  createDashboardSessionStore,
  type DashboardSessionStore,
} from "./dashboard-session-store.js";
import { ping } from "./database.js";
import { createEligibilityStore, type EligibilityStore } from "./eligibility-store.js";
import { createIdempotencyStore, type IdempotencyStore } from "./idempotency-store.js";
import { createMonthCountStore, type MonthCountStore } from "./month-counts.js";
import { createObligationStore, type ObligationStore } from "./obligation-store.js";
import { createOperatorStore, type OperatorStore } from "./operator-store.js";
import { createOrganizationStore, type OrganizationStore } from "./organization-store.js";
import { createQualityDepthStore, type QualityDepthStore } from "./quality-depth-store.js";
import { createReferenceStore, type ReferenceStore } from "./reference-store.js";
import { createReportCardStore, type ReportCardStore } from "./report-card-store.js";
import { createReportListing, type ReportListing } from "./report-listing.js";
import { createScopedReportListing, type ScopedReportListing } from "./report-listing-scoped.js";
import { createReportStore, type ReportStore } from "./report-store.js";
import { withTransientRetry } from "./retry.js";
import { createScorecardStore, type ScorecardStore } from "./scorecard-store.js";
import { createSubmissionStore, type SubmissionStore } from "./submission-store.js";
import type { Tables } from "./tables.js";
import { createWebhookDeliveryStore, type WebhookDeliveryStore } from "./webhook-delivery-store.js";
import { createWebhookEventStore, type WebhookEventStore } from "./webhook-event-store.js";
import { createWebhookProducerStore, type WebhookProducerStore } from "./webhook-producer-store.js";
import { createWebhookQualityStore, type WebhookQualityStore } from "./webhook-quality-store.js";
import { createWebhookSecretStore, type WebhookSecretStore } from "./webhook-secret-store.js";
import { createWebhookStore, type WebhookStore } from "./webhook-store.js";

/**
 * Every store over one database handle: the pool, or one transaction. Services receive this
 * and never see the handle; work that must commit as one runs in `transaction`, on stores
 * built over that transaction.
 */
export type Stores = {
  organizations: OrganizationStore;
  obligations: ObligationStore;
  references: ReferenceStore;
  reports: ReportStore;
  listing: ReportListing;
  /** The listing's month counts: folds the batches' deltas in (serve's job). */
  monthCounts: MonthCountStore;
  /** The listing of project and operator keys, across organizations. */
  scopedListing: ScopedReportListing;
  eligibility: EligibilityStore;
  scorecards: ScorecardStore;
  /** Records webhook events and queues their deliveries (call it inside the change's transaction). */
  webhookEvents: WebhookEventStore;
  /** Public depth snapshots and the flags that compare reports with them. */
  qualityDepth: QualityDepthStore;
  /** Subscribed endpoints and their delivery logs. */
  webhooks: WebhookStore;
  /** Rotates endpoints' signing secrets. */
  webhookSecrets: WebhookSecretStore;
  /** The queue of deliveries the delivery job works through. */
  webhookDeliveries: WebhookDeliveryStore;
  /** The cursors and kept outcomes of the job deriving events from stored data. */
  webhookProducer: WebhookProducerStore;
  /** The producer's quality.flagged outcomes and the reports recomputations changed. */
  webhookQuality: WebhookQualityStore;
  /** Idempotency-Key claims and the answers kept for replay. */
  idempotency: IdempotencyStore;
  /** The submission log (accepted submissions are logged by `reports.upsert`). */
  submissions: SubmissionStore;
  /** The monthly report card's figures. */
  reportCards: ReportCardStore;
  /** Reads across every organization, for the operator's dashboard. */
  operator: OperatorStore;
  /** Dashboard sign-ins (`/app`). */
  dashboardSessions: DashboardSessionStore;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  /**
   * Runs `work` in one transaction (all of it commits, or none). A serialization failure or a
   * deadlock aborts one side: the whole transaction is then run again, `work` included.
   */
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
};

/**
 * `parallelism`: how many connections one request may use at once (1 for PGlite's single
 * connection; a share of the pool for PostgreSQL), for queries that split their work.
 */
export function createStores(
  db: Kysely<Tables>,
  options: {
    parallelism?: number;
    splitAboveMarketDays?: number;
    publicDepthTolerance?: number;
    /** How `ping` asks the database (Database.ping; `select 1` on `db` without it). */
    ping?: () => Promise<void>;
  } = {},
): Stores {
  return {
    organizations: createOrganizationStore(db),
    obligations: createObligationStore(db),
    references: createReferenceStore(db),
    reports: createReportStore(db, options.publicDepthTolerance),
    listing: createReportListing(db),
    monthCounts: createMonthCountStore(db),
    scopedListing: createScopedReportListing(db),
    eligibility: createEligibilityStore(db),
    scorecards: createScorecardStore(db, options),
    webhookEvents: createWebhookEventStore(db),
    qualityDepth: createQualityDepthStore(db, options.publicDepthTolerance),
    webhooks: createWebhookStore(db),
    webhookSecrets: createWebhookSecretStore(db),
    webhookDeliveries: createWebhookDeliveryStore(db),
    webhookProducer: createWebhookProducerStore(db),
    webhookQuality: createWebhookQualityStore(db),
    idempotency: createIdempotencyStore(db),
    submissions: createSubmissionStore(db),
    reportCards: createReportCardStore(db),
    dashboardSessions: createDashboardSessionStore(db),
    operator: createOperatorStore(db),
    ping: options.ping ?? (() => ping(db)),
    transaction(work) {
      // Already in one: the work joins it (the outer transaction owns commit and retry).
      if (db.isTransaction) return work(this);
      return withTransientRetry(() =>
        db.transaction().execute((trx) => work(createStores(trx, options))),
      );
    },
  };
}

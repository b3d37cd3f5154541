import type { InstrumentType } from "./report.js";

/**
 * The events of CONTRACT section 7. Each is sent to the subscribed endpoints of the market
 * maker it concerns, of the projects owning its coin and of operators; `submission.rejected`
 * only to the market maker, `webhook.test` only to the endpoint it tests.
 */
export const WEBHOOK_EVENT_TYPES = [
  "report.missing",
  "report.late",
  "kpi.missed",
  "quality.flagged",
  "submission.rejected",
  "webhook.test",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The obligation market and day an event is about. */
export type MarketDay = {
  organizationId: string;
  baseCoinId: string;
  exchangeId: string;
  quote: string;
  instrumentType: InstrumentType;
  /** YYYY-MM-DD */
  date: string;
};

export type WebhookEventData = {
  "report.missing": MarketDay & { deadline: string };
  "report.late": MarketDay & { deadline: string; receivedAt: string };
  "kpi.missed": MarketDay & { failedKpis: string[]; late: boolean };
  "quality.flagged": MarketDay & { flags: string[] };
  "submission.rejected": {
    submissionId: string;
    apiVersion: number;
    recordCount: number;
    problemCount: number;
  };
  "webhook.test": { webhookId: string };
};

/** An event to record: who it concerns, when it happened, and what makes it the same event. */
export type WebhookEvent = {
  [T in WebhookEventType]: {
    type: T;
    data: WebhookEventData[T];
    /** The market maker it concerns (for webhook.test: the endpoint's organization). */
    organizationId: string;
    /** The coin it concerns: projects owning it hear of it. Null: no coin. */
    baseCoinId: string | null;
    /** The payload's `timestamp`. */
    occurredAt: Date;
    /** Recording an event with a key already recorded does nothing. Null: always recorded. */
    dedupKey: string | null;
    /** Only this endpoint hears of it (webhook.test). */
    webhookId?: string;
  };
}[WebhookEventType];

/** Events only the concerned organization's own endpoints receive. */
export function isOwnOrganizationOnly(type: WebhookEventType): boolean {
  return type === "submission.rejected";
}

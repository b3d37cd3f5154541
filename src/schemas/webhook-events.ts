import { z } from "zod";
import { KPI_NAMES } from "../domain/obligation.js";
import { INSTRUMENT_TYPES } from "../domain/report.js";
import type { WebhookEventType } from "../domain/webhook-event.js";
import { MAX_ID_LENGTH, storedText, wholeNumber } from "./text.js";

/**
 * The payload of each event (CONTRACT section 7), for the OpenAPI document's `webhooks`: what
 * a subscriber receives, documented from one schema per event.
 */
const id = (description: string) => storedText(MAX_ID_LENGTH).meta({ description });
const instant = (description: string) =>
  z.string().meta({ format: "date-time", maxLength: 30, description });

const marketDay = {
  organizationId: id("The market maker"),
  baseCoinId: id("The coin (project)"),
  exchangeId: id("The obligation market's exchange, as reports are stored"),
  quote: id("The record key's quote: a quote coin id, or an upper-case fiat symbol"),
  instrumentType: z.enum(INSTRUMENT_TYPES),
  date: z.string().meta({ format: "date", maxLength: 10, description: "The trading day" }),
};

const kpiNames = z.array(z.enum(KPI_NAMES)).max(KPI_NAMES.length);

const DATA: Record<WebhookEventType, { summary: string; data: z.ZodType }> = {
  "report.missing": {
    summary: "The deadline of an obligation market's day passed with no report",
    data: z.object({ ...marketDay, deadline: instant("The deadline that passed") }),
  },
  "report.late": {
    summary: "A day's first report arrived after its deadline",
    data: z.object({
      ...marketDay,
      deadline: instant("The day's deadline"),
      receivedAt: instant("When its first accepted version arrived"),
    }),
  },
  "kpi.missed": {
    summary: "A day's report misses KPIs of its obligation (sent again only when they change)",
    data: z.object({
      ...marketDay,
      failedKpis: kpiNames.meta({ description: "The KPIs the report fails" }),
      late: z.boolean().meta({ description: "The first version arrived after the deadline" }),
    }),
  },
  "quality.flagged": {
    summary: "A stored report version gained a data-quality flag",
    data: z.object({
      ...marketDay,
      flags: z.array(storedText(50)).max(10).meta({ description: "Its quality flags" }),
    }),
  },
  "submission.rejected": {
    summary: "A submission of the market maker was rejected (market maker's endpoints only)",
    data: z.object({
      submissionId: id("The submission (GET /api/v1/submissions/{id})"),
      apiVersion: wholeNumber(),
      recordCount: wholeNumber(),
      problemCount: wholeNumber(),
    }),
  },
  "webhook.test": {
    summary: "Sent by POST /api/v1/webhooks/{id}/test to that endpoint only",
    data: z.object({ webhookId: id("The endpoint tested") }),
  },
};

/** Each event's body: `{type, timestamp, data}`. */
export function webhookEventBodies() {
  return Object.entries(DATA).map(([type, { summary, data }]) => ({
    type,
    summary,
    body: z.object({
      type: z.literal(type),
      timestamp: instant("When the event happened (ISO 8601)"),
      data,
    }),
  }));
}

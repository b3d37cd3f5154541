import { z } from "zod";
import { DEFAULT_PREVIOUS_SECRET_SECONDS, MAX_PREVIOUS_SECRET_SECONDS } from "../domain/webhook.js";
import { WEBHOOK_EVENT_TYPES } from "../domain/webhook-event.js";
import { positiveInteger } from "./list-query.js";
import { pathId, storableText, storedText, wholeNumber } from "./text.js";

export const MAX_WEBHOOK_URL_LENGTH = 2000;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;
const MAX_ERROR_LENGTH = 300;
const TIMESTAMP_LENGTH = 30;

/** The events an endpoint may subscribe to (webhook.test reaches the tested endpoint anyway). */
export const SUBSCRIBABLE_EVENTS = WEBHOOK_EVENT_TYPES.filter((t) => t !== "webhook.test");
const eventName = z.enum(["*", ...SUBSCRIBABLE_EVENTS]);

const eventsSchema = z
  .array(eventName)
  .min(1)
  .max(SUBSCRIBABLE_EVENTS.length + 1)
  // One list, as stored: "*" stands for all; each name once.
  .transform((events) => (events.includes("*") ? ["*"] : [...new Set(events)]))
  .meta({
    description:
      'Event types to send, or ["*"] for all of them (a list with "*" is stored as ["*"]; duplicates once)',
    example: ["report.missing", "kpi.missed"],
  });

const urlSchema = storableText(MAX_WEBHOOK_URL_LENGTH).meta({
  description:
    "Where events are POSTed: an https URL whose host is and resolves to public addresses only",
  example: "https://hooks.example.com/trading-reports",
});

const descriptionSchema = storableText(MAX_WEBHOOK_DESCRIPTION_LENGTH, 0).meta({
  description: "What the endpoint is for",
  example: "Alerts to the ops channel",
});

/** Body of POST /api/v1/webhooks. Unknown fields are ignored. */
export const newWebhookSchema = z.object({
  url: urlSchema,
  events: eventsSchema,
  description: descriptionSchema.nullish(),
});

/** Body of PATCH /api/v1/webhooks/{id}: the fields to change. */
export const webhookPatchSchema = z.object({
  url: urlSchema.optional(),
  events: eventsSchema.optional(),
  description: descriptionSchema.nullish(),
  disabled: z.boolean().optional().meta({
    description: "true: nothing is sent to it (its pending deliveries fail); false: enabled again",
  }),
});

export const webhookParamsSchema = z.object({ id: pathId("The webhook's id") });

export const deliveryParamsSchema = webhookParamsSchema.extend({
  deliveryId: pathId("The delivery's id (its webhook-id)"),
});

const timestamp = (description: string) =>
  z.string().meta({ format: "date-time", maxLength: TIMESTAMP_LENGTH, description });

export const webhookSchema = z
  .object({
    id: z.uuid().meta({ maxLength: 36, example: "0f8fad5b-d9cb-469f-a165-70867728950e" }),
    url: storedText(MAX_WEBHOOK_URL_LENGTH).meta({
      example: "https://hooks.example.com/trading-reports",
    }),
    events: z.array(eventName).max(SUBSCRIBABLE_EVENTS.length + 1),
    description: storedText(MAX_WEBHOOK_DESCRIPTION_LENGTH).nullable(),
    disabled: z.boolean().meta({
      description:
        "Nothing is sent while true: set by PATCH, or by the service once every delivery failed for 5 days",
    }),
    createdAt: timestamp("When it was created"),
  })
  .meta({ id: "Webhook" });

const secretSchema = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]{43}=$/)
  .meta({
    maxLength: 50,
    description:
      "The signing secret (whsec_ and the base64 of 32 random bytes): shown in this answer only",
  });

export const createdWebhookSchema = webhookSchema.extend({ secret: secretSchema });

/** Body of POST /api/v1/webhooks/{id}/rotate-secret (optional). Unknown fields are ignored. */
export const rotateSecretSchema = z.object({
  previousSecretValidForSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_PREVIOUS_SECRET_SECONDS)
    .meta({ format: "int32" })
    .optional()
    .meta({
      description: `How long the replaced secret still signs deliveries, beside the new one: 0 (not at all) to ${MAX_PREVIOUS_SECRET_SECONDS} seconds (7 days); default ${DEFAULT_PREVIOUS_SECRET_SECONDS} (24 hours)`,
      example: 3600,
    }),
});

export const rotatedSecretSchema = z.object({
  id: z.uuid().meta({ maxLength: 36, example: "0f8fad5b-d9cb-469f-a165-70867728950e" }),
  secret: secretSchema,
  previousSecretExpiresAt: timestamp(
    "Until when deliveries also carry a signature by the replaced secret; null: they no longer do",
  ).nullable(),
});

export const webhooksResponseSchema = z.object({ items: z.array(webhookSchema).max(1000) });

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;

/** Query of GET /api/v1/webhooks/{id}/deliveries. */
export const deliveriesQuerySchema = z.object({
  status: z.enum(DELIVERY_STATUSES).optional().meta({ description: "Only deliveries in it" }),
  page: positiveInteger(999_999_999, "Expected a positive integer")
    .optional()
    .meta({ description: "Page number, from 1 (default 1)", example: "1" }),
  pageSize: positiveInteger(500, "Expected an integer from 1 to 500")
    .optional()
    .meta({ description: "Deliveries per page, 1 to 500 (default 100)", example: "50" }),
});
export type DeliveriesQuery = z.infer<typeof deliveriesQuerySchema>;

const deliverySchema = z
  .object({
    id: z.uuid().meta({ maxLength: 36, description: "The webhook-id header of every attempt" }),
    eventType: z.enum(WEBHOOK_EVENT_TYPES),
    createdAt: timestamp("When the event was queued for this endpoint"),
    status: z.enum(DELIVERY_STATUSES),
    attempts: wholeNumber().meta({ description: "Attempts made so far" }),
    lastAttemptAt: timestamp("When the last attempt was made").nullable(),
    lastStatusCode: wholeNumber()
      .nullable()
      .meta({ description: "HTTP status of the last attempt; null: none answered" }),
    lastError: storedText(MAX_ERROR_LENGTH)
      .nullable()
      .meta({ description: "Why the last attempt failed, with a short excerpt of the answer" }),
    nextAttemptAt: timestamp("When the next attempt is due (pending only)").nullable(),
  })
  .meta({ id: "WebhookDelivery" });

export const deliveriesResponseSchema = z.object({
  page: wholeNumber().meta({ description: "This page's number, from 1" }),
  totalPages: wholeNumber(),
  totalCount: wholeNumber().meta({ description: "Deliveries matching the filter" }),
  items: z.array(deliverySchema).max(500).meta({ description: "Newest first" }),
});

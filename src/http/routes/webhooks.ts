import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  createdWebhookSchema,
  deliveriesQuerySchema,
  deliveriesResponseSchema,
  deliveryParamsSchema,
  newWebhookSchema,
  webhookParamsSchema,
  webhookPatchSchema,
  webhookSchema,
  webhooksResponseSchema,
} from "../../schemas/webhook.js";
import type { Services } from "../../services/index.js";
import {
  authenticatedErrors,
  errorResponse,
  objectBodyErrors,
  queryErrors,
  unwantedBodyErrors,
} from "../openapi-responses.js";

const tags = ["webhooks"];
const webhookBodyErrors = objectBodyErrors({
  path: "events.0",
  message:
    "Invalid enum value. Expected '*' | 'report.missing' | 'report.late' | 'kpi.missed' | 'quality.flagged' | 'submission.rejected', received 'nope'",
});
export const notFound = {
  404: errorResponse(
    404,
    "Not Found",
    "No webhook with this id in the caller's organization",
    "Webhook not found",
  ),
};
const disabled = {
  409: errorResponse(
    409,
    "Conflict",
    "The webhook is disabled, or an attempt of the delivery is in progress",
    "Webhook is disabled: enable it (PATCH disabled: false) first",
  ),
};
const accepted = (description: string) =>
  z.object({ status: z.literal("queued") }).meta({ description, examples: [{ status: "queued" }] });
const noContent = z.undefined().meta({ description: "Deleted: nothing more is sent to it" });

const exampleWebhook = {
  id: "0f8fad5b-d9cb-469f-a165-70867728950e",
  url: "https://hooks.example.com/trading-reports",
  events: ["report.missing", "kpi.missed"],
  description: "Alerts to the ops channel",
  disabled: false,
  createdAt: "2026-11-23T09:30:00.000Z",
};

const exampleDelivery = {
  id: "9b2c7e4a-3f1d-4c55-8e0b-2d6f7a1c9e30",
  eventType: "kpi.missed",
  createdAt: "2026-11-23T12:00:01.000Z",
  status: "pending",
  attempts: 2,
  lastAttemptAt: "2026-11-23T12:05:07.000Z",
  lastStatusCode: 503,
  lastError: "HTTP 503: upstream unavailable",
  nextAttemptAt: "2026-11-23T12:35:07.000Z",
};

const create = {
  operationId: "createWebhook",
  summary: "Subscribe an endpoint to events",
  description:
    "Subscribes an https endpoint of the caller to the events of its read scope (a market maker: its own; a project: every market maker's for its coins; an operator: all). The URL's host must be and resolve to public addresses. The answer carries the signing secret, shown this once. At most WEBHOOKS_PER_ORGANIZATION (default 10) endpoints per organization (409 beyond).",
  tags,
  body: newWebhookSchema,
  response: {
    201: createdWebhookSchema.meta({
      description: "Created; store the secret now",
      examples: [
        { ...exampleWebhook, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/XM3uSxsnxA=" },
      ],
    }),
    ...webhookBodyErrors,
    409: errorResponse(
      409,
      "Conflict",
      "The organization has as many webhooks as it may",
      "An organization may have at most 10 webhooks (WEBHOOKS_PER_ORGANIZATION); delete one first",
    ),
    ...authenticatedErrors,
  },
};

const list = {
  operationId: "listWebhooks",
  summary: "The caller's webhooks",
  description: "Every endpoint of the caller's organization, oldest first, without secrets.",
  tags,
  response: {
    200: webhooksResponseSchema.meta({
      description: "Webhooks",
      examples: [{ items: [exampleWebhook] }],
    }),
    ...authenticatedErrors,
  },
};

const show = {
  operationId: "getWebhook",
  summary: "One webhook",
  description: "An endpoint of the caller's organization (without its secret).",
  tags,
  params: webhookParamsSchema,
  response: {
    200: webhookSchema.meta({ description: "The webhook", examples: [exampleWebhook] }),
    ...notFound,
    ...authenticatedErrors,
  },
};

const update = {
  operationId: "updateWebhook",
  summary: "Change a webhook",
  description:
    "Changes the given fields: url (checked as on creation), events, description, disabled. Disabling fails its pending deliveries (retry them once enabled again); enabling starts its failing streak afresh.",
  tags,
  params: webhookParamsSchema,
  body: webhookPatchSchema,
  response: {
    200: webhookSchema.meta({ description: "The webhook as changed", examples: [exampleWebhook] }),
    ...webhookBodyErrors,
    ...notFound,
    ...authenticatedErrors,
  },
};

const remove = {
  operationId: "deleteWebhook",
  summary: "Delete a webhook",
  description: "Deletes the endpoint and its delivery log; nothing more is sent to it.",
  tags,
  params: webhookParamsSchema,
  response: { 204: noContent, ...unwantedBodyErrors, ...notFound, ...authenticatedErrors },
};

const test = {
  operationId: "testWebhook",
  summary: "Send a webhook.test event",
  description:
    "Queues a `webhook.test` event (`data: {webhookId}`) for this endpoint only; see its delivery log for the outcome.",
  tags,
  params: webhookParamsSchema,
  response: {
    202: accepted("Queued"),
    ...unwantedBodyErrors,
    ...notFound,
    ...disabled,
    ...authenticatedErrors,
  },
};

const deliveries = {
  operationId: "listWebhookDeliveries",
  summary: "An endpoint's delivery log",
  description:
    "The endpoint's deliveries, newest first: one per event, with its attempts so far. The delivery id is the `webhook-id` header of every attempt.",
  tags,
  params: webhookParamsSchema,
  querystring: deliveriesQuerySchema,
  response: {
    200: deliveriesResponseSchema.meta({
      description: "One page of the delivery log",
      examples: [{ page: 1, totalPages: 1, totalCount: 1, items: [exampleDelivery] }],
    }),
    ...queryErrors({ path: "pageSize", message: "Expected an integer from 1 to 500" }),
    ...notFound,
    ...authenticatedErrors,
  },
};

const retry = {
  operationId: "retryWebhookDelivery",
  summary: "Attempt a delivery again now",
  description:
    "Makes one more attempt of the delivery, now (whatever its status), with the same webhook-id and body.",
  tags,
  params: deliveryParamsSchema,
  response: {
    202: accepted("Queued"),
    ...unwantedBodyErrors,
    404: errorResponse(404, "Not Found", "No such webhook or delivery", "Delivery not found"),
    ...disabled,
    ...authenticatedErrors,
  },
};

/** CONTRACT section 7: the caller's organization's subscriptions and their delivery logs. */
export function webhookRoutes(services: Services) {
  const hooks = services.webhooks;
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const org = (request: { caller: { organizationId: string } }) => request.caller.organizationId;
    app.post("/api/v1/webhooks", { schema: create }, async (request, reply) => {
      const created = await hooks.create(org(request), request.body);
      return reply.code(201).header("location", `/api/v1/webhooks/${created.id}`).send(created);
    });
    app.get("/api/v1/webhooks", { schema: list }, (request) => hooks.list(org(request)));
    app.get("/api/v1/webhooks/:id", { schema: show }, (request) =>
      hooks.get(org(request), request.params.id),
    );
    app.patch("/api/v1/webhooks/:id", { schema: update }, (request) =>
      hooks.update(org(request), request.params.id, request.body),
    );
    app.delete("/api/v1/webhooks/:id", { schema: remove }, async (request, reply) => {
      await hooks.remove(org(request), request.params.id);
      return reply.code(204).send();
    });
    app.post("/api/v1/webhooks/:id/test", { schema: test }, async (request, reply) => {
      await hooks.test(org(request), request.params.id);
      return reply.code(202).send({ status: "queued" as const });
    });
    app.get("/api/v1/webhooks/:id/deliveries", { schema: deliveries }, (request) =>
      hooks.deliveries(org(request), request.params.id, request.query),
    );
    app.post(
      "/api/v1/webhooks/:id/deliveries/:deliveryId/retry",
      { schema: retry },
      async (request, reply) => {
        await hooks.retry(org(request), request.params.id, request.params.deliveryId);
        return reply.code(202).send({ status: "queued" as const });
      },
    );
  };
}

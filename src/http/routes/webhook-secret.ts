import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  rotatedSecretSchema,
  rotateSecretSchema,
  webhookParamsSchema,
} from "../../schemas/webhook.js";
import type { Services } from "../../services/index.js";
import { authenticatedErrors, errorResponse, objectBodyErrors } from "../openapi-responses.js";
import { notFound } from "./webhooks.js";

const rotate = {
  operationId: "rotateWebhookSecret",
  summary: "Rotate a webhook's signing secret",
  description:
    "Replaces the endpoint's signing secret with a new one, shown in this answer only. Until previousSecretExpiresAt every delivery's webhook-signature carries two signatures, by the new secret and by the replaced one (space-separated, as Standard Webhooks allows), so a receiver verifies with either: deploy the new secret to the receiver, then nothing fails meanwhile. A rotation repeated within the window ends no secret: each replaced secret keeps its own window (one signature per valid secret, newest first; at most 10, then 409). previousSecretValidForSeconds 0 ends every earlier secret at once (a leaked secret). The body is optional.",
  tags: ["webhooks"],
  params: webhookParamsSchema,
  body: rotateSecretSchema.optional(),
  response: {
    200: rotatedSecretSchema.meta({
      description: "The new secret",
      examples: [
        {
          id: "0f8fad5b-d9cb-469f-a165-70867728950e",
          secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0n+fJT3X8kY=",
          previousSecretExpiresAt: "2026-11-24T09:30:00.000Z",
        },
      ],
    }),
    ...objectBodyErrors({
      path: "previousSecretValidForSeconds",
      message: "Number must be less than or equal to 604800",
    }),
    ...notFound,
    409: errorResponse(
      409,
      "Conflict",
      "10 replaced secrets still sign deliveries: rotate with previousSecretValidForSeconds 0, or wait",
      "10 replaced secrets of this webhook still sign deliveries: rotate with previousSecretValidForSeconds 0 (ends them all) or wait until one expires",
    ),
    ...authenticatedErrors,
  },
};

/** POST /api/v1/webhooks/{id}/rotate-secret: a new signing secret, the old one valid a while. */
export function webhookSecretRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.post("/api/v1/webhooks/:id/rotate-secret", { schema: rotate }, (request) =>
      services.webhooks.rotateSecret(
        request.caller.organizationId,
        request.params.id,
        request.body,
      ),
    );
  };
}

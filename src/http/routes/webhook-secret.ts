import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  rotatedSecretSchema,
  rotateSecretSchema,
  webhookParamsSchema,
} from "../../schemas/webhook.js";
import type { Services } from "../../services/index.js";
import { authenticatedErrors, objectBodyErrors } from "../openapi-responses.js";
import { notFound } from "./webhooks.js";

const rotate = {
  operationId: "rotateWebhookSecret",
  summary: "Rotate a webhook's signing secret",
  description:
    "Replaces the endpoint's signing secret with a new one, shown in this answer only. Until previousSecretExpiresAt every delivery's webhook-signature carries two signatures, by the new secret and by the replaced one (space-separated, as Standard Webhooks allows), so a receiver verifies with either: deploy the new secret to the receiver, then nothing fails meanwhile. A second rotation drops the secret the first one replaced. The body is optional.",
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

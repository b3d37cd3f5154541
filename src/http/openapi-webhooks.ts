import { z } from "zod";
import { MAX_PREVIOUS_SECRETS } from "../domain/webhook.js";
import { webhookEventBodies } from "../schemas/webhook-events.js";

const HEADERS = [
  {
    name: "webhook-id",
    description:
      "The delivery's id: one per event and endpoint, the same on every attempt (deduplicate on it)",
    schema: { type: "string", format: "uuid", maxLength: 36 },
  },
  {
    name: "webhook-timestamp",
    description: "Unix seconds of the attempt; refuse one far from your clock (replays)",
    schema: { type: "string", pattern: "^[0-9]{1,12}$", maxLength: 12 },
  },
  {
    name: "webhook-signature",
    description:
      'v1, and the base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the base64-decoded part of the secret after whsec_ (Standard Webhooks). After a secret rotation, for a while, one such signature per valid secret, newest first, separated by spaces: accept the delivery when any one matches.',
    schema: {
      type: "string",
      pattern: "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$",
      maxLength: (MAX_PREVIOUS_SECRETS + 1) * 48,
    },
  },
];

const DESCRIPTION =
  "POSTed to each subscribed endpoint in the event's scope, signed per Standard Webhooks (verify with the `standardwebhooks` package or a port of it). A 2xx within WEBHOOK_TIMEOUT_MS is success; anything else (redirects included, they are not followed) is retried after the delays of WEBHOOK_RETRY_SCHEDULE, then the delivery fails.";

/** The document's top-level `webhooks` (OpenAPI 3.1): every event a subscriber may receive. */
export function webhookOperations(): Record<string, unknown> {
  return Object.fromEntries(
    webhookEventBodies().map(({ type, summary, body }) => {
      const { $schema: _draft, ...schema } = z.toJSONSchema(body, { io: "output" });
      return [
        type,
        {
          post: {
            operationId: `webhook_${type.replace(".", "_")}`,
            summary,
            description: DESCRIPTION,
            tags: ["webhooks"],
            security: [],
            parameters: HEADERS.map((h) => ({ ...h, in: "header", required: true })),
            requestBody: { required: true, content: { "application/json": { schema } } },
            responses: {
              "200": { description: "Received (any 2xx)" },
              "400": { description: "Refused (a signature that does not verify): retried" },
            },
          },
        },
      ];
    }),
  );
}

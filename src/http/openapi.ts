import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import { jsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import { type DocumentOptions, finishDocument } from "./openapi-finish.js";
import { webhookOperations } from "./openapi-webhooks.js";

export type { DocumentOptions };

const DESCRIPTION =
  "Daily trading-metric reports of market makers: submit (v1, v2), validate, match with market data, list. Authenticate with `Authorization: <API key>` (or `Bearer <API key>`). Monetary and volume values are in USD; percentages are 0 to 100 (0.5 means 0.5 %); bps are basis points. Every answer carries `X-Request-Id`; answers to an authenticated key carry its rate limit (`X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`), and a 429 or 503 says when to retry (`Retry-After`).";

/**
 * The OpenAPI 3.1 document is generated from the routes: each route declares its Zod request
 * and response schemas (with their descriptions and examples), its `operationId`, summary,
 * description and tags once. This adds what belongs to the whole API: info, server, tags,
 * the schemas named by an `id` (components), and the headers of every answer (see
 * openapi-finish.ts).
 */
export function openApiOptions(options: DocumentOptions): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "trading-reports",
        version: "1.0.0",
        description: DESCRIPTION,
        license: { name: "Proprietary: for the service's customers only (UNLICENSED)" },
      },
      components: {
        securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "Authorization" } },
      },
      security: [{ apiKey: [] }],
      tags: [
        {
          name: "reports",
          description: "Submit daily reports (v1, v2) and list them (JSON or CSV)",
        },
        {
          name: "obligations",
          description:
            "What each market maker owes for a coin: the markets to report daily and the KPIs, per period",
        },
        {
          name: "scorecards",
          description:
            "How each obligation market was kept: days due, reported, missing, late, eligible and met, and day by day",
        },
        {
          name: "webhooks",
          description:
            "Subscriptions to events (report missing, late, KPI missed…), signed per Standard Webhooks, with their delivery logs",
        },
        {
          name: "submissions",
          description:
            "The submission log: every submission accepted or rejected, its problems with their codes, and the monthly report card",
        },
        {
          name: "reference data",
          description:
            "Projects, exchanges and markets to check a report against before submitting",
        },
        {
          name: "operations",
          description: "Unauthenticated probes for load balancers and orchestrators",
        },
      ],
    },
    transform: (input) => withExamples(jsonSchemaTransform(input)),
    transformObject: (document) => {
      const generated = jsonSchemaTransformObject(document);
      finishDocument(generated as unknown as Parameters<typeof finishDocument>[0], options);
      // OpenAPI 3.1's `webhooks`: the events subscribers receive (CONTRACT section 7).
      Object.assign(generated, { webhooks: webhookOperations() });
      return generated;
    },
  };
}

type Transformed = ReturnType<typeof jsonSchemaTransform>;
type JsonSchema = { $ref?: string; examples?: unknown[]; description?: string };
type Media = { schema?: JsonSchema; example?: unknown };

/**
 * A response's example, where readers and tools look for it: on the media type. @fastify/swagger
 * moves `examples` there for an inline schema, not for a named one (`$ref`), nor for a route
 * that lists its content types.
 */
function withExamples(transformed: Transformed): Transformed {
  const route = transformed.schema as { response?: Record<string, unknown> } | undefined;
  const responses = route?.response ?? {};
  for (const [status, response] of Object.entries(responses)) {
    const { content, ...schema } = response as JsonSchema & { content?: Record<string, Media> };
    if (content !== undefined) {
      for (const media of Object.values(content)) {
        const { examples, ...rest } = media.schema ?? {};
        if (examples?.length) Object.assign(media, { schema: rest, example: examples[0] });
      }
    } else if (schema.$ref !== undefined && schema.examples?.length) {
      const { examples, description, ...rest } = schema;
      responses[status] = {
        description,
        content: { "application/json": { schema: rest, example: examples[0] } },
      };
    }
  }
  return transformed;
}

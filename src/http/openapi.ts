import { z } from "zod";
import { listQuerySchema, reportPageSchema } from "../schemas/list-query.js";
import { marketsPageSchema, marketsQuerySchema } from "../schemas/markets.js";
import {
  badRequestSchema,
  errorSchema,
  exchangesResponseSchema,
  projectsResponseSchema,
  statusSchema,
  unauthorizedSchema,
} from "../schemas/reference.js";
import {
  MAX_V1_BATCH,
  MAX_V2_BATCH,
  submissionBodySchema,
  submissionResultSchema,
  v1RecordSchema,
  v2RecordSchema,
} from "../schemas/report.js";

type Json = Record<string, unknown>;

const jsonSchema = (schema: z.ZodType, io: "input" | "output" = "output"): Json =>
  z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;

const exampleV2 = {
  date: "2026-11-21",
  exchangeId: "binance",
  baseCoinId: "chainlink",
  quoteCoinId: "tether",
  bidDepthTob: 1200.5,
  bidDepth10: 5400,
  bidDepth25: 11800,
  bidDepth50: 24000,
  bidDepth100: 51000,
  bidDepth200: 98000,
  askDepthTob: 1100,
  askDepth10: 5100,
  askDepth25: 12100,
  askDepth50: 25000,
  askDepth100: 49500,
  askDepth200: 101000,
  bidAskDepth50: 49000,
  bidAskDepth100: 100500,
  bidAskDepth200: 199000,
  bidAskSpread: 0.12,
  topOfBookPercentage: 63.5,
  orderFillVolumeMaker: 350000,
  orderFillVolumeTaker: 120000,
  orderFillVolumeMakerTob: 90000,
  instrumentType: "spot",
  type: "project",
};
const exampleV1 = {
  date: "2026-11-21",
  exchangeId: "kraken",
  baseCoinId: "chainlink",
  quoteCoinSymbol: "USD",
  bidDepth50: 24000,
  askDepth50: 25000,
  bidAskSpread: 0.3,
};

const json = (schema: Json, example?: unknown) => ({
  content: { "application/json": { schema, ...(example === undefined ? {} : { example }) } },
});

const errors = {
  400: {
    description: "Invalid request: every problem, in record order",
    ...json(jsonSchema(badRequestSchema), {
      statusCode: 400,
      error: "Bad Request",
      message: [
        { path: "data.0.bidDepth50", message: "Expected number, received string" },
        {
          path: "data.3.baseCoinId",
          message: "Base coin with id 'chainlnk' does not match any valid ticker id",
        },
      ],
    }),
  },
  401: {
    description: "No API key, or an invalid or revoked one",
    ...json(jsonSchema(unauthorizedSchema), { statusCode: 401, message: "Invalid API key" }),
  },
  413: {
    description: "Body over the size limit",
    ...json(jsonSchema(errorSchema), {
      statusCode: 413,
      error: "Payload Too Large",
      message: "Request body is larger than the limit",
    }),
  },
  415: {
    description: "Body is not JSON",
    ...json(jsonSchema(errorSchema), {
      statusCode: 415,
      error: "Unsupported Media Type",
      message: "Unsupported Media Type: send application/json",
    }),
  },
  429: {
    description: "Rate limit exceeded; see Retry-After",
    ...json(jsonSchema(errorSchema), {
      statusCode: 429,
      error: "Too Many Requests",
      message: "Rate limit exceeded: 1200 requests per minute; retry in 1 minute",
    }),
  },
  503: {
    description: "Database unavailable or server overloaded; see Retry-After",
    ...json(jsonSchema(errorSchema), {
      statusCode: 503,
      error: "Service Unavailable",
      message: "Service temporarily unavailable; retry later",
    }),
  },
};

function submission(version: 1 | 2) {
  const record = version === 2 ? v2RecordSchema : v1RecordSchema;
  const example = version === 2 ? exampleV2 : exampleV1;
  return {
    post: {
      summary: `Submit v${version} reports (1 to ${version === 2 ? MAX_V2_BATCH : MAX_V1_BATCH} records)`,
      description:
        "Validates the whole batch, then creates or updates every record atomically: on any problem nothing is stored. A record key is date, exchange, base coin, quote coin (and instrument type in v2).",
      tags: ["reports"],
      parameters: [
        {
          name: "x-dry-run",
          in: "header",
          required: false,
          description:
            "`true`: validate and count, store nothing. `true`/`false` in any case; anything else is a 400.",
          schema: { type: "string", enum: ["true", "false"] },
          example: "true",
        },
      ],
      requestBody: {
        required: true,
        ...json(
          jsonSchema(
            submissionBodySchema(record, version === 2 ? MAX_V2_BATCH : MAX_V1_BATCH),
            "input",
          ),
          { data: [example] },
        ),
      },
      responses: {
        201: {
          description: "Stored (or, in a dry run, would be stored)",
          ...json(jsonSchema(submissionResultSchema), { createdCount: 1, updatedCount: 0 }),
        },
        ...errors,
      },
    },
  };
}

const queryParameters = Object.entries(listQuerySchema.shape).map(([name, schema]) => ({
  name,
  in: "query",
  required: false,
  schema: jsonSchema(schema as z.ZodType, "input"),
  example: {
    baseCoinId: "chainlink",
    exchangeId: "binance",
    dateGte: "2026-11-01",
    dateLte: "2026-11-21",
    page: "1",
    pageSize: "100",
  }[name],
}));

const marketsParameters = Object.entries(marketsQuerySchema.shape).map(([name, schema]) => {
  const meta = (schema as z.ZodType).meta() as { description?: string; example?: unknown };
  return {
    name,
    in: "query",
    required: false,
    description: meta?.description,
    schema: jsonSchema(schema as z.ZodType, "input"),
    example: meta?.example,
  };
});

/** The OpenAPI 3.1 document, generated from the very schemas the routes validate with. */
export function openApiDocument(): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "trading-reports",
      version: "1.0.0",
      description:
        "Daily trading-metric reports of market makers: submit (v1, v2), validate, match with market data, list. Authenticate with `Authorization: <API key>` (or `Bearer <API key>`).",
    },
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "Authorization" } },
    },
    security: [{ apiKey: [] }],
    tags: [{ name: "reports" }, { name: "reference data" }, { name: "operations" }],
    paths: {
      "/api/v2/report": submission(2),
      "/api/v1/report": submission(1),
      "/api/v1/reports": {
        get: {
          summary: "List the caller's reports of projects with an active engagement",
          description:
            "Ordered by date descending, exchangeId, baseCoinId, quote and instrument type. `Accept: text/csv` streams every matching report as CSV: the JSON item's fields plus `instrumentType` (before `type`), so that the file can be submitted again.",
          tags: ["reports"],
          parameters: queryParameters,
          responses: {
            200: {
              description: "One page",
              content: {
                "application/json": {
                  schema: jsonSchema(reportPageSchema),
                  example: {
                    page: 1,
                    totalPages: 1,
                    totalCount: 1,
                    items: [
                      {
                        ...exampleV2,
                        exchangeName: "Binance",
                        baseCoinSymbol: "LINK",
                        instrumentType: undefined,
                        eligibilityStatus: "eligible",
                        eligibilityReason: null,
                      },
                    ],
                  },
                },
                "text/csv": { schema: { type: "string" } },
              },
            },
            400: { ...errors[400], description: "Invalid query parameter (path names it)" },
            401: errors[401],
            429: errors[429],
            503: errors[503],
          },
        },
      },
      "/api/v1/projects": {
        get: {
          summary: "Projects the caller's organization is engaged with today",
          tags: ["reference data"],
          responses: {
            200: {
              description: "Engaged projects",
              ...json(jsonSchema(projectsResponseSchema), {
                items: [
                  {
                    id: "chainlink",
                    symbol: "LINK",
                    name: "Chainlink",
                    engagementType: "project",
                    engagedSince: "2026-07-01",
                    engagedUntil: null,
                  },
                ],
              }),
            },
            401: errors[401],
          },
        },
      },
      "/api/v1/exchanges": {
        get: {
          summary:
            "Every supported exchange, with spot/derivatives support and venue family (group)",
          tags: ["reference data"],
          responses: {
            200: {
              description: "Exchanges",
              ...json(jsonSchema(exchangesResponseSchema), {
                items: [
                  {
                    id: "binance_futures",
                    name: "Binance (Futures)",
                    spot: false,
                    derivatives: true,
                    marketData: true,
                    group: "binance",
                  },
                ],
              }),
            },
            401: errors[401],
          },
        },
      },
      "/api/v1/markets": {
        get: {
          summary: "Markets with market data, and from when: check a pair before submitting",
          description:
            "Every market on an exchange with market data, ordered by exchangeId, baseCoinId, instrumentType and quoteSymbol, paged. A report is eligible when its pair is listed here and its date is on or after `collectedSince`.",
          tags: ["reference data"],
          parameters: marketsParameters,
          responses: {
            200: {
              description: "One page of markets",
              ...json(jsonSchema(marketsPageSchema), {
                page: 1,
                totalPages: 1,
                totalCount: 1,
                items: [
                  {
                    exchangeId: "binance",
                    baseCoinId: "chainlink",
                    quoteCoinId: "tether",
                    quoteSymbol: "USDT",
                    instrumentType: "spot",
                    collectedSince: "2024-01-01",
                  },
                ],
              }),
            },
            400: { ...errors[400], description: "Invalid query parameter (path names it)" },
            401: errors[401],
            429: errors[429],
            503: errors[503],
          },
        },
      },
      "/healthz": {
        get: {
          summary: "Process is up",
          tags: ["operations"],
          security: [],
          responses: {
            200: { description: "Up", ...json(jsonSchema(statusSchema), { status: "ok" }) },
          },
        },
      },
      "/readyz": {
        get: {
          summary: "Database reachable",
          tags: ["operations"],
          security: [],
          responses: {
            200: { description: "Ready", ...json(jsonSchema(statusSchema), { status: "ok" }) },
            503: errors[503],
          },
        },
      },
    },
  };
}

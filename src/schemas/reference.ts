import { z } from "zod";
import { AUTHENTICATION_FAILURES } from "../domain/api-key.js";
import { SUBMISSION_TYPES } from "../domain/report.js";
import { storedDate } from "./report.js";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH, storedText } from "./text.js";

// Names and symbols of coins and exchanges come from fixtures or from CoinGecko (stored as
// CoinGecko names them): they have no limit of the service's own.
const projectSchema = z
  .object({
    organizationId: storedText(MAX_ID_LENGTH).optional().meta({
      example: "acme",
      description: "The engaged market maker (project and operator keys only)",
    }),
    organizationName: storedText(MAX_NAME_LENGTH).optional().meta({
      example: "Acme Market Making",
      description: "Its display name (project and operator keys only)",
    }),
    id: z.string().meta({ example: "chainlink", description: "Base coin (project) id" }),
    symbol: z.string().meta({ example: "LINK" }),
    name: z.string().meta({ example: "Chainlink" }),
    engagementType: z
      .enum(SUBMISSION_TYPES)
      .meta({ description: "The submission type reports of this project carry" }),
    engagedSince: storedDate({ example: "2026-07-01", description: "First day of the engagement" }),
    engagedUntil: storedDate({ description: "Last day of the engagement; null when open-ended" })
      .nullable()
      .meta({ example: null }),
  })
  .meta({ id: "Project" });
export const projectsResponseSchema = z.object({ items: z.array(projectSchema) });

const exchangeItemSchema = z
  .object({
    id: z.string().meta({ example: "binance_futures" }),
    name: z.string().meta({ example: "Binance (Futures)" }),
    spot: z.boolean().meta({ description: "Spot markets are supported" }),
    derivatives: z.boolean().meta({ description: "Derivatives (perp) markets are supported" }),
    marketData: z
      .boolean()
      .meta({ description: "Market data is collected (else every report is ineligible)" }),
    group: z.string().meta({
      example: "binance",
      description: "Venue family: v1 reports are routed to the group's spot or perp exchange",
    }),
  })
  .meta({ id: "Exchange" });
export const exchangesResponseSchema = z.object({ items: z.array(exchangeItemSchema) });

/** A problem's path names a field or a parameter: `data.<index>.<field>` at most. */
const MAX_PROBLEM_PATH_LENGTH = MAX_ID_LENGTH;
/** The reason phrases of Node's STATUS_CODES are shorter (the longest has 31 characters). */
const MAX_REASON_LENGTH = 64;

export const statusSchema = z.object({ status: z.literal("ok") });

const problemSchema = z
  .object({
    path: storedText(MAX_PROBLEM_PATH_LENGTH)
      .optional()
      .meta({ description: "Where: data.<record index>.<field>, or the query parameter" }),
    // A message may quote the offending value (an unknown enum value, an unknown id): its
    // length is bounded by the body limit only.
    message: z.string(),
  })
  .meta({ id: "Problem" });

export const badRequestSchema = z
  .object({
    statusCode: z.literal(400),
    error: z.literal("Bad Request"),
    message: z.array(problemSchema),
  })
  .meta({ id: "BadRequest" });

export const unauthorizedSchema = z
  .object({
    statusCode: z.literal(401),
    message: z.enum(Object.values(AUTHENTICATION_FAILURES)),
  })
  .meta({ id: "Unauthorized" });

/** Every other 4xx and 5xx answer: status, its reason phrase and a message. */
export const errorSchema = z
  .object({
    statusCode: z.number().int().min(400).max(599).meta({ format: "int32" }),
    error: z.string().max(MAX_REASON_LENGTH),
    message: z.string(),
  })
  .meta({ id: "Error" });

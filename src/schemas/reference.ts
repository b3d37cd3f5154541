import { z } from "zod";
import { SUBMISSION_TYPES } from "../domain/report.js";

const projectSchema = z.object({
  organizationId: z.string().optional().meta({
    example: "acme",
    description: "The engaged market maker (project and operator keys only)",
  }),
  organizationName: z.string().optional().meta({
    example: "Acme Market Making",
    description: "Its display name (project and operator keys only)",
  }),
  id: z.string().meta({ example: "chainlink", description: "Base coin (project) id" }),
  symbol: z.string().meta({ example: "LINK" }),
  name: z.string().meta({ example: "Chainlink" }),
  engagementType: z
    .enum(SUBMISSION_TYPES)
    .meta({ description: "The submission type reports of this project carry" }),
  engagedSince: z
    .string()
    .meta({ format: "date", example: "2026-07-01", description: "First day of the engagement" }),
  engagedUntil: z.string().nullable().meta({
    format: "date",
    example: null,
    description: "Last day of the engagement; null when open-ended",
  }),
});
export const projectsResponseSchema = z.object({ items: z.array(projectSchema) });

const exchangeItemSchema = z.object({
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
});
export const exchangesResponseSchema = z.object({ items: z.array(exchangeItemSchema) });

export const statusSchema = z.object({ status: z.literal("ok") });

const problemSchema = z.object({
  path: z
    .string()
    .optional()
    .meta({ description: "Where: data.<record index>.<field>, or the query parameter" }),
  message: z.string(),
});
export const badRequestSchema = z.object({
  statusCode: z.literal(400),
  error: z.literal("Bad Request"),
  message: z.array(problemSchema),
});
export const unauthorizedSchema = z.object({ statusCode: z.literal(401), message: z.string() });
export const errorSchema = z.object({
  statusCode: z.number().int(),
  error: z.string(),
  message: z.string(),
});

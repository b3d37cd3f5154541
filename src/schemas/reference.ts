import { z } from "zod";
import { SUBMISSION_TYPES } from "../domain/report.js";

export const projectSchema = z.object({
  id: z.string().meta({ example: "chainlink" }),
  symbol: z.string().meta({ example: "LINK" }),
  name: z.string().meta({ example: "Chainlink" }),
  engagementType: z.enum(SUBMISSION_TYPES),
  engagedSince: z.string().meta({ format: "date", example: "2026-07-01" }),
  engagedUntil: z.string().nullable().meta({ format: "date", example: null }),
});
export const projectsResponseSchema = z.object({ items: z.array(projectSchema) });
export type ProjectsResponse = z.infer<typeof projectsResponseSchema>;

export const exchangeItemSchema = z.object({
  id: z.string().meta({ example: "binance_futures" }),
  name: z.string().meta({ example: "Binance (Futures)" }),
  spot: z.boolean(),
  derivatives: z.boolean(),
  marketData: z.boolean(),
  group: z.string().meta({ example: "binance" }),
});
export const exchangesResponseSchema = z.object({ items: z.array(exchangeItemSchema) });
export type ExchangesResponse = z.infer<typeof exchangesResponseSchema>;

export const statusSchema = z.object({ status: z.literal("ok") });

export const problemSchema = z.object({ path: z.string().optional(), message: z.string() });
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

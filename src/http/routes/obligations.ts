import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { obligationsQuerySchema, obligationsResponseSchema } from "../../schemas/obligation.js";
import type { Services } from "../../services/index.js";
import { authenticatedErrors, queryErrors } from "../openapi-responses.js";

const exampleObligation = {
  organizationId: "acme",
  organizationName: "Acme Market Making",
  baseCoinId: "chainlink",
  since: "2026-01-01",
  until: null,
  markets: [
    { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
    { exchangeId: "kraken", quote: "USD", instrumentType: "spot" },
  ],
  kpis: {
    minBidDepth200: 50000,
    minAskDepth200: 50000,
    maxBidAskSpread: 1,
    minTopOfBookPercentage: 40,
  },
};

const list = {
  operationId: "listObligations",
  summary: "Obligation periods: what market makers owe, per coin, market and KPI",
  description:
    "The obligation periods in the caller's scope: a market maker's key sees its own; a project's key every market maker's for the project's coins; an operator's key all. Each period lists the markets to be reported every day (named as reports are stored) and the KPI thresholds a report must meet. Ordered by organizationId, baseCoinId, since.",
  tags: ["obligations"],
  querystring: obligationsQuerySchema,
  response: {
    200: obligationsResponseSchema.meta({
      description: "Obligation periods",
      examples: [{ items: [exampleObligation] }],
    }),
    ...queryErrors({
      path: "baseCoinId",
      message: "String must contain at most 200 character(s)",
    }),
    ...authenticatedErrors,
  },
};

export function obligationRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get("/api/v1/obligations", { schema: list }, (request) =>
      services.listObligations(request.caller, request.query),
    );
  };
}

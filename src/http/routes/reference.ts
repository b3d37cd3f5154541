import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { marketsPageSchema, marketsQuerySchema } from "../../schemas/markets.js";
import { exchangesResponseSchema, projectsResponseSchema } from "../../schemas/reference.js";
import type { Services } from "../../services/index.js";
import { authenticatedErrors, queryErrors } from "../openapi-responses.js";

const projects = {
  operationId: "listProjects",
  summary: "Projects the caller's organization is engaged with today",
  description:
    "A market maker's key: its engagements active today, one per project. A project key: the engagements active today of every market maker for its coins; an operator key: every engagement active today. Their items start with `organizationId` and `organizationName` and are ordered by project, then organization.",
  tags: ["reference data"],
  response: {
    200: projectsResponseSchema.meta({
      description: "Engaged projects",
      examples: [
        {
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
        },
      ],
    }),
    ...authenticatedErrors,
  },
};

const exchanges = {
  operationId: "listExchanges",
  summary: "Every supported exchange, with spot/derivatives support and venue family (group)",
  description:
    "Every exchange a report may name. A record whose instrument type its exchange lacks is stored under the exchange of the same group that has it.",
  tags: ["reference data"],
  response: {
    200: exchangesResponseSchema.meta({
      description: "Exchanges",
      examples: [
        {
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
        },
      ],
    }),
    ...authenticatedErrors,
  },
};

const markets = {
  operationId: "listMarkets",
  summary: "Markets with market data, and from when: check a pair before submitting",
  description:
    "Every market on an exchange with market data, ordered by exchangeId, baseCoinId, instrumentType and quoteSymbol, paged. A report is eligible when its pair is listed here and its date is on or after `collectedSince`.",
  tags: ["reference data"],
  querystring: marketsQuerySchema,
  response: {
    200: marketsPageSchema.meta({
      description: "One page of markets",
      examples: [
        {
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
        },
      ],
    }),
    ...queryErrors({ path: "pageSize", message: "Expected an integer from 1 to 1000" }),
    ...authenticatedErrors,
  },
};

export function referenceRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get("/api/v1/projects", { schema: projects }, (request) =>
      services.listProjects(request.caller),
    );
    app.get("/api/v1/exchanges", { schema: exchanges }, () => services.listExchanges());
    app.get("/api/v1/markets", { schema: markets }, (request) =>
      services.listMarkets(request.query),
    );
  };
}

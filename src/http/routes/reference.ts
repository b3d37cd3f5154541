import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { exchangesResponseSchema, projectsResponseSchema } from "../../schemas/reference.js";
import type { Services } from "../../services/index.js";
import { errorResponses } from "../openapi.js";

const projects = {
  summary: "Projects the caller's organization is engaged with today",
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
    401: errorResponses[401],
  },
};

const exchanges = {
  summary: "Every supported exchange, with spot/derivatives support and venue family (group)",
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
    401: errorResponses[401],
  },
};

export function referenceRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get("/api/v1/projects", { schema: projects }, (request) =>
      services.listProjects(request.caller),
    );
    app.get("/api/v1/exchanges", { schema: exchanges }, () => services.listExchanges());
  };
}

import type { FastifyInstance } from "fastify";
import { ValidationError } from "../../domain/errors.js";
import { marketsQuerySchema } from "../../schemas/markets.js";
import { problemsOf } from "../../schemas/problems.js";
import type { Services } from "../../services/index.js";

export function referenceRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/api/v1/projects", (request) => services.listProjects(request.caller));
    app.get("/api/v1/exchanges", () => services.listExchanges());
    app.get("/api/v1/markets", (request) => {
      const query = marketsQuerySchema.safeParse(request.query);
      if (!query.success) throw new ValidationError(problemsOf(query.error));
      return services.listMarkets(query.data);
    });
  };
}

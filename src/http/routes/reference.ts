import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/index.js";

export function referenceRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/api/v1/projects", (request) => services.listProjects(request.caller));
    app.get("/api/v1/exchanges", () => services.listExchanges());
  };
}

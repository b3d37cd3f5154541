import type { FastifyInstance } from "fastify";
import type { Services } from "../../services/index.js";

export function healthRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/healthz", async () => ({ status: "ok" }));
    app.get("/readyz", async () => {
      await services.ready();
      return { status: "ok" };
    });
  };
}

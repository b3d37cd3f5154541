import type { FastifyInstance } from "fastify";
import { UnavailableError } from "../../domain/errors.js";
import type { Services } from "../../services/index.js";

export function healthRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    app.get("/healthz", async () => ({ status: "ok" }));
    app.get("/readyz", async () => {
      try {
        await services.ready();
      } catch (error) {
        // Whatever keeps the database from answering (down, closed, pool ended), the probe's
        // answer is "not ready": a 503, never a 500.
        if (error instanceof UnavailableError) throw error;
        throw new UnavailableError("database not reachable", { cause: error });
      }
      return { status: "ok" };
    });
  };
}

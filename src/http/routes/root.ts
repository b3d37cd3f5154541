import type { FastifyInstance } from "fastify";

/** Where a newcomer's first request (`/`) leads: the reference and the main endpoints. */
export const ROOT_INDEX = {
  service: "trading-reports",
  docs: "/docs",
  openapi: "/openapi.json",
  health: "/healthz",
  ready: "/readyz",
  reports: "/api/v1/reports",
} as const;

/**
 * `GET /`: a browser (it asks for HTML) is sent to the interactive reference; any other client
 * gets a small JSON index of where things are. No key needed, nothing about any tenant.
 */
export function rootRoutes() {
  return async (app: FastifyInstance) => {
    app.get("/", { schema: { hide: true } }, async (request, reply) => {
      if ((request.headers.accept ?? "").includes("text/html")) return reply.redirect("/docs");
      return ROOT_INDEX;
    });
  };
}

import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { openApiDocument } from "../openapi.js";

/** `/openapi.json` and the interactive reference at `/docs`, served from local packages. */
export function docsRoutes() {
  return async (app: FastifyInstance) => {
    const document = openApiDocument();
    await app.register(swagger, { mode: "static", specification: { document: document as never } });
    await app.register(swaggerUi, {
      routePrefix: "/docs",
      uiConfig: { deepLinking: true, tryItOutEnabled: true },
    });
    app.get("/openapi.json", { schema: { hide: true } }, async () => document);
  };
}
